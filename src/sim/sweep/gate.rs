//! `--expect 'boundary >= 500'` on a sweep: the boundary against a
//! threshold; no boundary (the grid does not bracket it) breaks the gate.

use crate::run::ExpectOutcome;
use crate::run::expect::Op;

use super::Sweep;

/// One parsed boundary gate.
#[derive(Debug, Clone, PartialEq)]
pub struct BoundaryGate {
    pub expr: String,
    pub(crate) op: Op,
    /// In the swept variable's unit: `/s`, or seconds for `for`.
    pub threshold: f64,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid --expect `{expr}` with --sweep: {reason}")]
pub struct GateError {
    pub expr: String,
    pub reason: String,
}

impl BoundaryGate {
    /// `boundary OP NUMBER[UNIT]`: UNIT `/s` for a rate, `s` or `ms` for a
    /// length.
    pub fn parse(expr: &str) -> Result<BoundaryGate, GateError> {
        let err = |reason: String| GateError {
            expr: expr.to_owned(),
            reason,
        };
        let text = expr.trim();
        let Some(rest) = text.strip_prefix("boundary") else {
            return Err(err(
                "a sweep is gated on its boundary: write e.g. `boundary >= 500`".into(),
            ));
        };
        let rest = rest.trim_start();
        let ops = Op::SYMBOLS;
        let Some((sym, op)) = ops.iter().find(|(sym, _)| rest.starts_with(sym)) else {
            return Err(err(
                "no comparison after `boundary`; use one of < <= == != >= >".into(),
            ));
        };
        let rhs = rest[sym.len()..].trim();
        let (num, scale) = if let Some(n) = rhs.strip_suffix("/s") {
            (n, 1.0)
        } else if let Some(n) = rhs.strip_suffix("ms") {
            (n, 1e-3)
        } else if let Some(n) = rhs.strip_suffix('s') {
            (n, 1.0)
        } else {
            (rhs, 1.0)
        };
        let value: f64 = num
            .trim()
            .parse()
            .ok()
            .filter(|v: &f64| v.is_finite() && *v >= 0.0)
            .ok_or_else(|| err(format!("`{rhs}` is not a number of 0 or more")))?;
        Ok(BoundaryGate {
            expr: text.to_owned(),
            op: *op,
            threshold: value * scale,
        })
    }

    /// Held or broken; a sweep without a boundary breaks every gate
    /// (`measured` is then null in JSON).
    pub fn evaluate(&self, sweep: &Sweep) -> ExpectOutcome {
        let measured = sweep.boundary.value;
        ExpectOutcome {
            expr: self.expr.clone(),
            held: measured.is_some_and(|m| self.op.holds(m, self.threshold)),
            measured: measured.unwrap_or(f64::NAN),
            threshold: self.threshold,
            unit: if sweep.variable == "for" {
                "s".into()
            } else {
                "/s".into()
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_a_boundary_gate() {
        let g = BoundaryGate::parse("boundary >= 500").unwrap();
        assert_eq!((g.op, g.threshold), (Op::Ge, 500.0));
        assert_eq!(
            BoundaryGate::parse("boundary<1500ms").unwrap().threshold,
            1.5
        );
        assert!(BoundaryGate::parse("success >= 0.9").is_err());
        assert!(BoundaryGate::parse("boundary 5").is_err());
        assert!(BoundaryGate::parse("boundary >= lots").is_err());
    }
}
