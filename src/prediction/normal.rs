//! The standard normal tail, for latency figures that need P(latency > x) of
//! the log-normal the engines draw from. A crate for one function would be a
//! dependency to vet and keep; W. J. Cody's erfc is forty lines of data.
//!
//! `erfc` is Cody's rational Chebyshev approximation ("Rational Chebyshev
//! approximations for the error function", Math. Comp. 23 (1969) 631–638),
//! with the coefficients and the three intervals of his netlib `specfun`
//! routine CALERF: relative error near 1e-16 over the whole
//! double range, so tails of 1e-9 are as good as the middle. (Abramowitz and
//! Stegun 7.1.26 is shorter but its 1.5e-7 *absolute* error is useless for
//! tails that small.)

// The coefficients keep the digits Cody published (18 significant); the
// compiler rounds each to the nearest double, which is what he intended.
#![allow(clippy::excessive_precision)]

/// z of the 95th percentile of the standard normal distribution.
pub(crate) const Z95: f64 = 1.644_853_626_951_472_2;

/// The complementary error function, erfc(x) = 1 − erf(x).
pub fn erfc(x: f64) -> f64 {
    if x.is_nan() {
        return f64::NAN;
    }
    let y = x.abs();
    let upper = if y <= 0.468_75 {
        // erf(y) = y · P(y²) / Q(y²).
        let ysq = if y > 1.11e-16 { y * y } else { 0.0 };
        let mut num = A[4] * ysq;
        let mut den = ysq;
        for (a, b) in A[..3].iter().zip(&B[..3]) {
            num = (num + a) * ysq;
            den = (den + b) * ysq;
        }
        let erf = y * (num + A[3]) / (den + B[3]);
        1.0 - erf
    } else if y <= 4.0 {
        // erfc(y) = exp(−y²) · P(y) / Q(y).
        let mut num = C[8] * y;
        let mut den = y;
        for (c, d) in C[..7].iter().zip(&D[..7]) {
            num = (num + c) * y;
            den = (den + d) * y;
        }
        exp_minus_square(y) * (num + C[7]) / (den + D[7])
    } else if y >= 26.543 {
        // Below the smallest double.
        0.0
    } else {
        // erfc(y) = exp(−y²)/y · (1/√π + 1/y² · R(1/y²)).
        let ysq = 1.0 / (y * y);
        let mut num = P[5] * ysq;
        let mut den = ysq;
        for (p, q) in P[..4].iter().zip(&Q[..4]) {
            num = (num + p) * ysq;
            den = (den + q) * ysq;
        }
        let r = ysq * (num + P[4]) / (den + Q[4]);
        exp_minus_square(y) * (FRAC_1_SQRT_PI - r) / y
    };
    if x < 0.0 { 2.0 - upper } else { upper }
}

/// P(Z > z) for a standard normal Z.
pub(crate) fn upper_tail(z: f64) -> f64 {
    0.5 * erfc(z / std::f64::consts::SQRT_2)
}

/// exp(−y²) without the rounding error of squaring y first: y² is split
/// into a part exact in floating point and a small rest (Cody's device).
fn exp_minus_square(y: f64) -> f64 {
    let head = (y * 16.0).trunc() / 16.0;
    let rest = (y - head) * (y + head);
    (-head * head).exp() * (-rest).exp()
}

const FRAC_1_SQRT_PI: f64 = 5.6418958354775628695e-1;

// Cody's coefficients, as CALERF gives them.
const A: [f64; 5] = [
    3.16112374387056560e00,
    1.13864154151050156e02,
    3.77485237685302021e02,
    3.20937758913846947e03,
    1.85777706184603153e-1,
];
const B: [f64; 4] = [
    2.36012909523441209e01,
    2.44024637934444173e02,
    1.28261652607737228e03,
    2.84423683343917062e03,
];
const C: [f64; 9] = [
    5.64188496988670089e-1,
    8.88314979438837594e00,
    6.61191906371416295e01,
    2.98635138197400131e02,
    8.81952221241769090e02,
    1.71204761263407058e03,
    2.05107837782607147e03,
    1.23033935479799725e03,
    2.15311535474403846e-8,
];
const D: [f64; 8] = [
    1.57449261107098347e01,
    1.17693950891312499e02,
    5.37181101862009858e02,
    1.62138957456669019e03,
    3.29079923573345963e03,
    4.36261909014324716e03,
    3.43936767414372164e03,
    1.23033935480374942e03,
];
const P: [f64; 6] = [
    3.05326634961232344e-1,
    3.60344899949804439e-1,
    1.25781726111229246e-1,
    1.60837851487422766e-2,
    6.58749161529837803e-4,
    1.63153871373020978e-2,
];
const Q: [f64; 5] = [
    2.56852019228982242e00,
    1.87295284992346047e00,
    5.27905102951428412e-1,
    6.05183413124413191e-2,
    2.33520497626869185e-3,
];

#[cfg(test)]
mod tests {
    use super::*;

    /// erfc at points of every interval, both signs, against glibc's
    /// correctly rounded `erfc` (CORE-MATH, as Python's `math.erfc` prints
    /// it on this machine); erfc(1) agrees with Abramowitz–Stegun table 7.1
    /// (erf 1 = 0.84270 07929 49714 86934).
    #[test]
    fn erfc_matches_known_values_to_about_1e_15() {
        let known = [
            (0.0, 1.0),
            (0.25, 0.723_673_609_831_763_1),
            (0.5, 0.479_500_122_186_953_5),
            (1.0, 0.157_299_207_050_285_13),
            (2.0, 0.004_677_734_981_047_265),
            (3.0, 2.209_049_699_858_543_8e-5),
            (4.0, 1.541_725_790_028_002e-8),
            (5.0, 1.537_459_794_428_035_1e-12),
            (10.0, 2.088_487_583_762_545e-45),
            (-1.0, 1.842_700_792_949_715),
        ];
        for (x, want) in known {
            let got = erfc(x);
            let rel = ((got - want) / want).abs();
            assert!(
                rel < 2e-15,
                "erfc({x}) = {got:e}, want {want:e} (rel {rel:e})"
            );
        }
        assert_eq!(erfc(27.0), 0.0);
        assert_eq!(erfc(-27.0), 2.0);
        assert!(erfc(f64::NAN).is_nan());
    }

    #[test]
    fn the_normal_tail_at_its_quantiles() {
        assert_eq!(upper_tail(0.0), 0.5);
        assert!((upper_tail(Z95) - 0.05).abs() < 1e-15);
        // z of the 99th percentile, as `Latency` keeps it.
        assert!((upper_tail(2.326_347_874_040_841) - 0.01).abs() < 1e-15);
        assert!((upper_tail(-Z95) - 0.95).abs() < 1e-15);
    }
}
