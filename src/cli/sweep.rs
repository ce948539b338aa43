//! `retrylint simulate --sweep`: reads the sweep and its boundary gates,
//! runs it, prints it. The sweep itself is `sim::sweep`.

use retrylint::formats;
use retrylint::sim::{self, sweep};
use retrylint::topology::Topology;

use super::outcome::{Failure, Outcome, emit};
use super::run_args::{Prepared, RunFormat};

pub fn sweep(
    t: &Topology,
    p: &Prepared,
    text: &str,
    steps: u32,
    gates: &[String],
    options: sim::SimOptions,
    format: Option<RunFormat>,
) -> Result<Outcome, Failure> {
    let usage = |e: &dyn std::fmt::Display| Failure::Usage(e.to_string());
    let spec = sweep::Spec::parse(text, steps).map_err(|e| usage(&e))?;
    let gates = gates
        .iter()
        .map(|g| sweep::BoundaryGate::parse(g).map_err(|e| usage(&e)))
        .collect::<Result<Vec<_>, _>>()?;
    let mut r = sweep::run(t, &p.scenario, &p.load, &spec, options.trials, &options)
        .map_err(|e| usage(&e))?;
    r.expectations = gates.iter().map(|g| g.evaluate(&r.sweep)).collect();
    emit(&formats::render_sweep(
        format.map_or(formats::RunFormat::Table, Into::into),
        &r,
    ));
    Ok(Outcome::of_run(
        r.interrupted,
        r.expectations.iter().all(|e| e.held),
    ))
}
