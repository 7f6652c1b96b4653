//! Filter banks (`ops::convolve::bank`): every response against the f64 reference (direct sums,
//! `cpu::signal_convolve`) and against fftconvolve on the GPU; odd numbers of kernels (the last
//! one unpaired), 1-4D odd shapes, every mode. Fresh random inputs, poisoned temporaries.
//!
//! Tolerance 1e-6 relative L2, as for fftconvolve (tests/convolve.rs): the packed path is the
//! same f32 transforms (complex instead of real, of the same lengths) with f64 twiddles, whose
//! error is a few f32 epsilons times log N (~1e-7), spread evenly over the output. That error is
//! relative to the pair's larger response; the bank balances the pair's kernel norms (by an
//! exact power of two) so it stays relative to each response, which the kernel scaled by 1e3
//! next to ones of 1 checks (unbalanced, its partner's error was 6e-5).

use crate::tests::common;
use common::*;

use lucent::ops::convolve::bank::FilterBank;
use lucent::ops::convolve::{self, cpu, Mode};
use lucent::{Error, Recording};
use ndarray::{ArrayD, IxDyn};

const TOL: f64 = 1e-6;

fn check(got: &ArrayD<f32>, want: &ArrayD<f64>, what: &str) {
    assert_eq!(got.shape(), want.shape(), "{what}: shape");
    let (g, w): (Vec<f32>, Vec<f64>) = (got.iter().copied().collect(), want.iter().copied().collect());
    let err = rel_l2(&g, &w);
    assert!(err <= TOL, "{what}: relative L2 error {err:e} > {TOL:e}");
}

/// The bank's responses and, in the same recording, fftconvolve with each kernel.
fn bank_and_fftconvolve(image: &ArrayD<f32>, kernels: &[ArrayD<f32>], mode: Mode) -> (Vec<ArrayD<f32>>, Vec<ArrayD<f32>>) {
    let views: Vec<_> = kernels.iter().map(|k| k.view()).collect();
    let bank = FilterBank::new(gpu(), &views, image.shape(), mode).unwrap();
    assert_eq!(bank.len(), kernels.len());
    let mut rec = Recording::new(gpu());
    rec.set_poison(true);
    let x = rec.upload_f32(&image.view()).unwrap();
    let responses = bank.record(&mut rec, x).unwrap();
    assert_eq!(responses.len(), kernels.len());
    let bank_d: Vec<_> = responses.into_iter().map(|r| rec.download(r)).collect();
    let mut fft_d = Vec::new();
    for k in kernels {
        let kb = rec.upload_f32(&k.view()).unwrap();
        let y = convolve::fftconvolve(&mut rec, x, kb, mode).unwrap();
        fft_d.push(rec.download(y));
    }
    let r = rec.run().unwrap();
    let get = |ds: Vec<_>| ds.into_iter().map(|d| r.f32(d).unwrap()).collect();
    (get(bank_d), get(fft_d))
}

#[test]
fn every_response_matches_fftconvolve_and_the_reference() {
    // (image, kernel shape, number of kernels): odd counts leave one kernel unpaired.
    let cases: &[(&[usize], &[usize], usize)] =
        &[(&[37], &[5], 3), (&[1], &[1], 1), (&[17, 23], &[5, 4], 5), (&[9, 11, 13], &[3, 5, 3], 3), (&[3, 5, 7, 9], &[3, 3, 1, 5], 4)];
    for &(xd, kd, n) in cases {
        let image = rand_array(xd);
        let mut kernels: Vec<_> = (0..n).map(|_| rand_array(kd)).collect();
        // Responses of very different magnitude share one complex transform.
        kernels[0].mapv_inplace(|v| v * 1e3);
        for mode in [Mode::Full, Mode::Same, Mode::Valid] {
            let (bank, fft) = bank_and_fftconvolve(&image, &kernels, mode);
            for (i, k) in kernels.iter().enumerate() {
                let want = cpu::signal_convolve(&to64(&image), &to64(k), mode).unwrap();
                let what = format!("{xd:?} ⊛ kernel {i} of {n} {kd:?} {mode:?}");
                check(&bank[i], &want, &format!("bank {what}"));
                check(&fft[i], &want, &format!("fftconvolve {what}"));
            }
        }
    }
}

/// The packed spectra are made once and serve many images; a compiled recording runs again.
#[test]
fn bank_is_reused() {
    let dims = [12usize, 10, 9];
    let kernels: Vec<_> = (0..3).map(|_| rand_array(&[4, 3, 5])).collect();
    let views: Vec<_> = kernels.iter().map(|k| k.view()).collect();
    let bank = FilterBank::new(gpu(), &views, &dims, Mode::Same).unwrap();
    assert_eq!(bank.output_dims(), &dims);
    let images: Vec<_> = (0..2).map(|_| rand_array(&dims)).collect();
    let mut rec = Recording::new(gpu());
    rec.set_poison(true);
    let mut downloads = Vec::new();
    for image in &images {
        let x = rec.upload_f32(&image.view()).unwrap();
        downloads.push(bank.record(&mut rec, x).unwrap().into_iter().map(|r| rec.download(r)).collect::<Vec<_>>());
    }
    let compiled = rec.compile().unwrap();
    for run in 0..2 {
        let r = compiled.run(gpu()).unwrap();
        for (image, ds) in images.iter().zip(&downloads) {
            for (k, &d) in kernels.iter().zip(ds) {
                let want = cpu::signal_convolve(&to64(image), &to64(k), Mode::Same).unwrap();
                check(&r.f32(d).unwrap(), &want, &format!("run {run}"));
            }
        }
    }
}

#[test]
fn bad_input_is_reported() {
    let k = rand_array(&[3, 3]);
    let other = rand_array(&[3, 4]);
    let mut nan = rand_array(&[3, 3]);
    nan[[0, 1]] = f32::NAN;
    assert!(matches!(FilterBank::new(gpu(), &[], &[8, 8], Mode::Same), Err(Error::Empty(_))));
    assert!(matches!(FilterBank::new(gpu(), &[k.view(), other.view()], &[8, 8], Mode::Same), Err(Error::Shape(_))));
    assert!(matches!(FilterBank::new(gpu(), &[k.view(), nan.view()], &[8, 8], Mode::Same), Err(Error::NonFinite(_))));
    assert!(matches!(FilterBank::new(gpu(), &[k.view()], &[8], Mode::Same), Err(Error::Shape(_))));
    assert!(matches!(FilterBank::new(gpu(), &[k.view()], &[2, 8], Mode::Valid), Err(Error::Shape(_))));
    // Images of another shape or type.
    let bank = FilterBank::new(gpu(), &[k.view()], &[8, 8], Mode::Same).unwrap();
    let mut rec = Recording::new(gpu());
    let wrong = rec.upload_f32(&rand_array(&[8, 9]).view()).unwrap();
    assert!(matches!(bank.record(&mut rec, wrong), Err(Error::Shape(_))));
    let complex = rec.upload_c32(&ArrayD::from_elem(IxDyn(&[8, 8]), num_complex::Complex32::new(1.0, 0.0)).view()).unwrap();
    assert!(matches!(bank.record(&mut rec, complex), Err(Error::Dtype(_))));
}
