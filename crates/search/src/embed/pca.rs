//! Principal component analysis of a small symmetric matrix: the eigenvectors of a covariance
//! matrix by cyclic Jacobi rotations (exact to rounding for the few hundred dimensions of a
//! sentence model, no linear algebra dependency).

/// Eigenvalues and eigenvectors of the symmetric `n`×`n` matrix `a` (row-major), largest
/// eigenvalue first. Each eigenvector is a row of the returned matrix (row-major, `n`×`n`), with
/// its largest component positive so the result does not depend on rounding signs.
pub fn symmetric_eigen(a: &[f64], n: usize) -> (Vec<f64>, Vec<f64>) {
    assert_eq!(a.len(), n * n, "matrix of {n}x{n} expected");
    let mut a = a.to_vec();
    // v holds the eigenvectors as columns while rotating.
    let mut v = vec![0.0f64; n * n];
    for i in 0..n {
        v[i * n + i] = 1.0;
    }
    let total: f64 = a.iter().map(|x| x * x).sum::<f64>().max(f64::MIN_POSITIVE);
    for _sweep in 0..64 {
        let mut off = 0.0;
        for p in 0..n {
            for q in p + 1..n {
                off += a[p * n + q] * a[p * n + q];
            }
        }
        if off <= total * 1e-24 {
            break;
        }
        for p in 0..n {
            for q in p + 1..n {
                rotate(&mut a, &mut v, n, p, q);
            }
        }
    }
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&i, &j| a[j * n + j].total_cmp(&a[i * n + i]));
    let values: Vec<f64> = order.iter().map(|&i| a[i * n + i]).collect();
    let mut vectors = Vec::with_capacity(n * n);
    for &c in &order {
        let col: Vec<f64> = (0..n).map(|r| v[r * n + c]).collect();
        let biggest = col
            .iter()
            .copied()
            .fold(0.0f64, |m, x| if x.abs() > m.abs() { x } else { m });
        let sign = if biggest < 0.0 { -1.0 } else { 1.0 };
        vectors.extend(col.into_iter().map(|x| x * sign));
    }
    (values, vectors)
}

/// One Jacobi rotation in the plane (p, q): `a ← Jᵀ a J`, `v ← v J`, zeroing `a[p][q]`.
fn rotate(a: &mut [f64], v: &mut [f64], n: usize, p: usize, q: usize) {
    let apq = a[p * n + q];
    if apq.abs() < 1e-300 {
        return;
    }
    let theta = (a[q * n + q] - a[p * n + p]) / (2.0 * apq);
    let t = theta.signum() / (theta.abs() + (theta * theta + 1.0).sqrt());
    let c = 1.0 / (t * t + 1.0).sqrt();
    let s = t * c;
    for k in 0..n {
        let (akp, akq) = (a[k * n + p], a[k * n + q]);
        a[k * n + p] = c * akp - s * akq;
        a[k * n + q] = s * akp + c * akq;
    }
    for k in 0..n {
        let (apk, aqk) = (a[p * n + k], a[q * n + k]);
        a[p * n + k] = c * apk - s * aqk;
        a[q * n + k] = s * apk + c * aqk;
    }
    for k in 0..n {
        let (vkp, vkq) = (v[k * n + p], v[k * n + q]);
        v[k * n + p] = c * vkp - s * vkq;
        v[k * n + q] = s * vkp + c * vkq;
    }
}

/// A projection on principal components: `y = (x - mean) · components`.
#[derive(Debug, Clone, PartialEq)]
pub struct Projection {
    pub mean: Vec<f32>,
    /// `mean.len() × k`, row-major: the components are columns.
    pub components: Vec<f32>,
    pub k: usize,
}

impl Projection {
    /// The projection of one vector of `mean.len()` values.
    pub fn project(&self, x: &[f32]) -> Vec<f32> {
        let mut y = vec![0f32; self.k];
        for (r, (xi, m)) in x.iter().zip(&self.mean).enumerate() {
            let d = xi - m;
            let row = self
                .components
                .get(r * self.k..(r + 1) * self.k)
                .unwrap_or(&[]);
            for (yc, w) in y.iter_mut().zip(row) {
                *yc += d * w;
            }
        }
        y
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn eigenvectors_rebuild_the_matrix_in_order() {
        // A random-looking symmetric matrix.
        let n = 7;
        let mut a = vec![0.0; n * n];
        let mut seed = 0x9e37_79b9_u64;
        for i in 0..n {
            for j in i..n {
                seed = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
                let x = (seed >> 33) as f64 / (1u64 << 31) as f64 - 0.5;
                a[i * n + j] = x;
                a[j * n + i] = x;
            }
        }
        let (values, vectors) = symmetric_eigen(&a, n);
        assert!(values.windows(2).all(|w| w[0] >= w[1]), "{values:?}");
        // Σ λ v vᵀ = A, and the vectors are orthonormal.
        for i in 0..n {
            for j in 0..n {
                let rebuilt: f64 = (0..n)
                    .map(|k| values[k] * vectors[k * n + i] * vectors[k * n + j])
                    .sum();
                assert!((rebuilt - a[i * n + j]).abs() < 1e-9, "{i},{j}");
                let dot: f64 = (0..n)
                    .map(|k| vectors[i * n + k] * vectors[j * n + k])
                    .sum();
                assert!((dot - f64::from(u8::from(i == j))).abs() < 1e-9);
            }
        }
    }

    #[test]
    fn a_diagonal_matrix_gives_its_axes() {
        let a = [1.0, 0.0, 0.0, 0.0, 3.0, 0.0, 0.0, 0.0, 2.0];
        let (values, vectors) = symmetric_eigen(&a, 3);
        assert_eq!(values, vec![3.0, 2.0, 1.0]);
        assert_eq!(&vectors[0..3], &[0.0, 1.0, 0.0]);
        assert_eq!(&vectors[3..6], &[0.0, 0.0, 1.0]);
    }
}
