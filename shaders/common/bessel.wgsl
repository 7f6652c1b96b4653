// e^{ix} with the argument reduced first, and the Bessel functions J0 and J1 (Abramowitz &
// Stegun), accurate for arguments up to ~1e4 where WGSL's own cos/sin are not.
const TWO_PI_HI: f32 = 6.28125;
const TWO_PI_LO: f32 = 0.0019353071795864769;
const INV_TWO_PI: f32 = 0.15915494309189535;

// e^{i x} for |x| up to ~1e4: x less its nearest multiple of 2π (2π in two parts, the first
// exact in k · TWO_PI_HI), then cos/sin on [−π, π].
fn cis(x: f32) -> vec2<f32> {
    let k = round(x * INV_TWO_PI);
    let t = (x - k * TWO_PI_HI) - k * TWO_PI_LO;
    return vec2<f32>(cos(t), sin(t));
}

// cos(x) for x ≥ 0 (the Bessel functions' asymptotic phase).
fn cos_reduced(x: f32) -> f32 {
    return cis(x).x;
}

// J0 and J1 by Abramowitz & Stegun 9.4.1-9.4.6 (|error| ≤ 5e-8 and 4e-8 in exact arithmetic),
// the approximations psfmodels uses.
fn bessel_j0(x_in: f32) -> f32 {
    let x = abs(x_in);
    if (x <= 3.0) {
        let y = x * x / 9.0;
        return 1.0 + y * (-2.2499997 + y * (1.2656208 + y * (-0.3163866 + y * (0.0444479 + y * (-0.0039444 + y * 0.0002100)))));
    }
    let y = 3.0 / x;
    let f0 = 0.79788456 + y * (-0.00000077 + y * (-0.00552740 + y * (-0.00009512 + y * (0.00137237 + y * (-0.00072805 + y * 0.00014476)))));
    let t0 = -0.78539816 + y * (-0.04166397 + y * (-0.00003954 + y * (0.00262573 + y * (-0.00054125 + y * (-0.00029333 + y * 0.00013558)))));
    return sqrt(1.0 / x) * f0 * cos_reduced(x + t0);
}

fn bessel_j1(x_in: f32) -> f32 {
    let x = abs(x_in);
    var r: f32;
    if (x <= 3.0) {
        let y = x * x / 9.0;
        r = x * (0.5 + y * (-0.56249985 + y * (0.21093573 + y * (-0.03954289 + y * (0.00443319 + y * (-0.00031761 + y * 0.00001109))))));
    } else {
        let y = 3.0 / x;
        let f1 = 0.79788456 + y * (0.00000156 + y * (0.01659667 + y * (0.00017105 + y * (-0.00249511 + y * (0.00113653 + y * -0.00020033)))));
        let t1 = -2.35619449 + y * (0.12499612 + y * (0.00005650 + y * (-0.00637897 + y * (0.00074348 + y * (0.00079824 + y * -0.00029166)))));
        r = sqrt(1.0 / x) * f1 * cos_reduced(x + t1);
    }
    return select(r, -r, x_in < 0.0);
}
