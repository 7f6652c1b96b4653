//! Twiddle and chirp tables, computed in f64 on the host with the phase reduced exactly in
//! integers, kept in f64 and stored in the plan's precision (never WGSL sin/cos, whose error the
//! spec bounds only by 2^-11).
//! All tables of one plan live in one buffer; each is added once.

use std::collections::HashMap;

use num_complex::Complex64;
use rustfft::FftPlanner;

use super::plan::LinePass;

#[derive(Clone, Debug, PartialEq, Eq, Hash)]
enum Key {
    Roots(usize),
    StageRoots(usize, Vec<usize>),
    Powers { total: usize, step: usize, count: usize },
    Chirp(usize),
    ChirpSpectrum(usize, usize),
    RaderIndices(usize),
    RaderSpectrum(usize),
}

#[derive(Default)]
pub struct Twiddles {
    pub data: Vec<Complex64>,
    offsets: HashMap<Key, u32>,
}

/// exp(-2πi t / n) for an exact integer phase t (reduced mod n first).
fn root(t: u64, n: u64) -> Complex64 {
    let t = t % n;
    if (4 * t).is_multiple_of(n) {
        // Quarter turns exactly: cos and sin of multiples of π/2 are not exact in floating point.
        return [Complex64::new(1.0, 0.0), Complex64::new(0.0, -1.0), Complex64::new(-1.0, 0.0), Complex64::new(0.0, 1.0)][(4 * t / n) as usize];
    }
    let angle = -2.0 * std::f64::consts::PI * (t as f64) / (n as f64);
    Complex64::new(angle.cos(), angle.sin())
}

/// exp(-πi j² / n): the Bluestein chirp, with j² reduced mod 2n in integers.
fn chirp(j: u64, n: u64) -> Complex64 {
    let t = (j as u128 * j as u128 % (2 * n as u128)) as u64;
    root(t, 2 * n)
}

/// Each radix stage as (r, ns): its radix and the points of the stages before it.
fn stages(radices: &[usize]) -> impl Iterator<Item = (usize, usize)> + '_ {
    radices.iter().scan(1, |ns, &r| Some((r, std::mem::replace(ns, *ns * r))))
}

/// Where each stage's twiddles start in `Twiddles::stage_roots` (stage 0 has none).
pub fn stage_offsets(radices: &[usize]) -> Vec<usize> {
    stages(radices).scan(0, |at, (r, ns)| Some(std::mem::replace(at, *at + if ns > 1 { (r - 1) * ns } else { 0 }))).collect()
}

impl Twiddles {
    fn add(&mut self, key: Key, make: impl FnOnce() -> Vec<Complex64>) -> u32 {
        if let Some(&o) = self.offsets.get(&key) {
            return o;
        }
        let offset = self.data.len() as u32;
        self.data.extend(make());
        self.offsets.insert(key, offset);
        offset
    }

    /// W_n^t for t < n.
    pub fn roots(&mut self, n: usize) -> u32 {
        self.add(Key::Roots(n), || (0..n as u64).map(|t| root(t, n as u64)).collect())
    }

    /// The radix stages' twiddles of a line pass, stage after stage (those after the first):
    /// for the stage of radix r after stages of ns points, W_n^(k·q·n/(ns·r)) at (q − 1)·ns + k
    /// (q = 1..r, k < ns), so the threads of a stage (consecutive k) read consecutive entries.
    /// `stage_offsets` gives where each stage starts.
    pub fn stage_roots(&mut self, pass: &LinePass) -> u32 {
        let n = pass.n;
        self.add(Key::StageRoots(n, pass.radices.clone()), || {
            let mut data = Vec::new();
            for (r, ns) in stages(&pass.radices).filter(|&(_, ns)| ns > 1) {
                let step = n / (ns * r);
                for q in 1..r {
                    data.extend((0..ns).map(|k| root((k * q * step) as u64, n as u64)));
                }
            }
            data
        })
    }

    /// W_total^(a·step) for a < count (the two-level tables of the four-step twiddle).
    pub fn powers(&mut self, total: usize, step: usize, count: usize) -> u32 {
        self.add(Key::Powers { total, step, count }, || (0..count as u64).map(|a| root(a * step as u64, total as u64)).collect())
    }

    /// exp(-πi k² / n) for k < n.
    pub fn chirp(&mut self, n: usize) -> u32 {
        self.add(Key::Chirp(n), || (0..n as u64).map(|k| chirp(k, n as u64)).collect())
    }

    /// FFT_m of the conjugate chirp wrapped onto length m, divided by m (the inverse transform
    /// that follows runs unscaled).
    pub fn chirp_spectrum(&mut self, n: usize, m: usize) -> u32 {
        self.add(Key::ChirpSpectrum(n, m), || {
            let mut b = vec![Complex64::new(0.0, 0.0); m];
            for j in 0..n {
                let c = chirp(j as u64, n as u64).conj();
                b[j] = c;
                if j > 0 {
                    b[m - j] = c;
                }
            }
            FftPlanner::<f64>::new().plan_fft_forward(m).process(&mut b);
            b.iter().map(|&c| c / m as f64).collect()
        })
    }
}

/// g^e mod p for e < p − 1, in order.
fn rader_powers(p: usize, g: usize) -> impl Iterator<Item = usize> {
    (0..p - 1).scan(1, move |x, _| Some(std::mem::replace(x, *x * g % p)))
}

impl Twiddles {
    /// Rader's index tables for the prime p with primitive root g: entry q holds g^−q mod p
    /// (where the first pass gathers input q) in .x and g^q mod p (where the second scatters
    /// output q) in .y (exact in f32 too: p < 2^24).
    pub fn rader_indices(&mut self, p: usize, g: usize) -> u32 {
        self.add(Key::RaderIndices(p), || {
            let up: Vec<usize> = rader_powers(p, g).collect();
            // g^−q = g^(p−1−q).
            (0..p - 1).map(|q| Complex64::new(up[(p - 1 - q) % (p - 1)] as f64, up[q] as f64)).collect()
        })
    }

    /// FFT_(p−1) of W_p^(g^s), s < p − 1, divided by p − 1 (the inverse transform that follows
    /// runs unscaled): the convolution kernel of Rader's algorithm.
    pub fn rader_spectrum(&mut self, p: usize, g: usize) -> u32 {
        self.add(Key::RaderSpectrum(p), || {
            let mut b: Vec<Complex64> = rader_powers(p, g).map(|t| root(t as u64, p as u64)).collect();
            FftPlanner::<f64>::new().plan_fft_forward(p - 1).process(&mut b);
            b.iter().map(|&c| c / (p - 1) as f64).collect()
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn roots_are_exact_at_the_quarter_points() {
        let mut t = Twiddles::default();
        let o = t.roots(8) as usize;
        assert_eq!(t.data[o + 2], Complex64::new(0.0, -1.0));
        assert_eq!(t.data[o + 4], Complex64::new(-1.0, 0.0));
        assert_eq!(t.roots(8) as usize, o, "tables are shared");
    }

    #[test]
    fn rader_tables() {
        let (p, g) = (17, 3);
        let mut t = Twiddles::default();
        let o = t.rader_indices(p, g) as usize;
        for q in 0..p - 1 {
            let (gather, scatter) = (t.data[o + q].re as usize, t.data[o + q].im as usize);
            assert_eq!(scatter, crate::fft::plan::pow_mod(g, q, p));
            assert_eq!(gather * scatter % p, 1, "g^-q · g^q = 1");
        }
        // Gauss sums: the kernel's spectrum is −1 at DC and has modulus √p elsewhere.
        let o = t.rader_spectrum(p, g) as usize;
        let l = (p - 1) as f64;
        assert!((t.data[o] * l - Complex64::new(-1.0, 0.0)).norm() < 1e-12);
        for k in 1..p - 1 {
            assert!(((t.data[o + k] * l).norm() - (p as f64).sqrt()).abs() < 1e-12);
        }
    }

    #[test]
    fn chirp_phase_is_reduced_exactly() {
        // j² overflows f64's exact integers long before u128: compare with a direct reduction.
        let n = 4093u64;
        let j = 4000u64;
        let direct = root((j * j) % (2 * n), 2 * n);
        assert!((chirp(j, n) - direct).norm() < 1e-15);
    }
}
