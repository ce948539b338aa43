//! Measured beside predicted: a chaos run's JSON (`chaos --format json`) read
//! back and set beside the static worst case and the simulation of the same
//! scenario, service by service, with the end-to-end figures.

use std::path::Path;

use crate::run::RunReport;

/// The most bytes of run JSON read (a run's JSON is a few hundred KB even for
/// a large topology).
pub(crate) const MAX_BYTES: u64 = 64 << 20;

/// A chaos run's JSON that cannot be used, with where and how to fix it.
#[derive(Debug, thiserror::Error)]
pub enum ChaosFileError {
    #[error("{file}: cannot read: {source}")]
    Io {
        file: String,
        source: std::io::Error,
    },
    #[error(
        "{file}: {size} bytes is over the {MAX_BYTES}-byte limit of a run's JSON; give the JSON `retrylint chaos --format json` printed"
    )]
    TooLarge { file: String, size: u64 },
    #[error(
        "{file}:{line}:{column}: not a run's JSON: {message}; give the output of `retrylint chaos TOPOLOGY --format json > run.json`"
    )]
    Json {
        file: String,
        line: usize,
        column: usize,
        message: String,
    },
}

/// Reads a chaos run's JSON.
pub fn read(path: &Path) -> Result<RunReport, ChaosFileError> {
    let file = path.display().to_string();
    let io = |source| ChaosFileError::Io {
        file: file.clone(),
        source,
    };
    let size = std::fs::metadata(path).map_err(io)?.len();
    if size > MAX_BYTES {
        return Err(ChaosFileError::TooLarge { file, size });
    }
    let text = std::fs::read_to_string(path).map_err(io)?;
    parse(&text, &file)
}

/// Parses a chaos run's JSON text, errors naming `file`.
pub(crate) fn parse(text: &str, file: &str) -> Result<RunReport, ChaosFileError> {
    serde_json::from_str(text).map_err(|e| ChaosFileError::Json {
        file: file.to_owned(),
        line: e.line(),
        column: e.column(),
        message: e
            .to_string()
            .split(" at line ")
            .next()
            .unwrap_or("")
            .to_owned(),
    })
}

/// One service: attempts per user request as measured, simulated and
/// predicted.
#[derive(Debug, Clone, PartialEq)]
pub struct Row {
    pub service: String,
    pub measured: f64,
    /// The simulation's figure, when it ran the same scenario.
    pub simulated: Option<f64>,
    /// The static worst case within the run's horizon (as the run reported it).
    pub predicted: f64,
    pub(crate) fault_target: bool,
}

/// End-to-end figures measured and simulated.
#[derive(Debug, Clone, PartialEq)]
pub struct EndToEnd {
    pub requests: (u64, Option<u64>),
    pub success: (f64, Option<f64>),
    pub(crate) p50_ms: (f64, Option<f64>),
    pub(crate) p99_ms: (f64, Option<f64>),
}

#[derive(Debug, Clone, PartialEq)]
pub struct Measured {
    pub file: String,
    pub fault: String,
    pub seed: u64,
    pub topology: String,
    pub rows: Vec<Row>,
    pub end_to_end: EndToEnd,
    /// Why a figure is missing or the comparison is loose.
    pub notes: Vec<String>,
}

/// Sets `chaos` beside `sim` (the page's simulation of the topology named
/// `topology`), when there is one.
pub fn beside(file: &str, chaos: &RunReport, sim: Option<&RunReport>, topology: &str) -> Measured {
    let mut notes = Vec::new();
    if !chaos.topology.is_empty() && chaos.topology != topology {
        notes.push(format!(
            "the run is of topology `{}`, this page of `{topology}`",
            chaos.topology
        ));
    }
    if chaos.mode != "chaos" && !chaos.mode.is_empty() {
        notes.push(format!(
            "the file is a `{}` run, not a chaos run",
            chaos.mode
        ));
    }
    let same = sim.filter(|s| s.fault == chaos.fault);
    if let Some(s) = sim
        && same.is_none()
    {
        notes.push(format!(
            "the run injected `{}`, the simulation on this page `{}`: no simulated column",
            chaos.fault, s.fault
        ));
    }
    let rows = chaos
        .services
        .iter()
        .map(|m| Row {
            service: m.service.clone(),
            measured: m.amplification.measured,
            simulated: same
                .and_then(|s| s.service(&m.service))
                .map(|s| s.amplification.measured),
            predicted: m.amplification.predicted,
            fault_target: m.fault_target,
        })
        .collect();
    let e = &chaos.end_to_end;
    let se = same.map(|s| &s.end_to_end);
    Measured {
        file: file.to_owned(),
        fault: chaos.fault.clone(),
        seed: chaos.seed,
        topology: chaos.topology.clone(),
        rows,
        end_to_end: EndToEnd {
            requests: (e.requests, se.map(|s| s.requests)),
            success: (e.success_ratio(), se.map(|s| s.success_ratio())),
            p50_ms: (e.latency_ms.p50, se.map(|s| s.latency_ms.p50)),
            p99_ms: (e.latency_ms.p99, se.map(|s| s.latency_ms.p99)),
        },
        notes,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_json_names_the_place_and_the_fix() {
        let e = parse("{\n  \"fault\": 3\n}", "run.json").unwrap_err();
        let text = e.to_string();
        assert!(text.starts_with("run.json:2:"), "{text}");
        assert!(text.contains("chaos TOPOLOGY --format json"), "{text}");
    }

    #[test]
    fn a_different_fault_leaves_the_simulated_column_out() {
        let mut chaos = RunReport {
            fault: "503-burst".into(),
            mode: "chaos".into(),
            topology: "t".into(),
            services: vec![crate::run::ServiceReport {
                service: "db".into(),
                amplification: crate::run::Amplification {
                    measured: 8.0,
                    predicted: 9.0,
                    saturated: false,
                    estimate: false,
                },
                ..Default::default()
            }],
            ..Default::default()
        };
        let mut sim = chaos.clone();
        sim.mode = "simulate".into();
        sim.services[0].amplification.measured = 8.5;
        let m = beside("run.json", &chaos, Some(&sim), "t");
        assert_eq!(m.rows[0].simulated, Some(8.5));
        assert!(m.notes.is_empty());
        chaos.fault = "overload".into();
        let m = beside("run.json", &chaos, Some(&sim), "t");
        assert_eq!(m.rows[0].simulated, None);
        assert_eq!(m.notes.len(), 1);
    }
}
