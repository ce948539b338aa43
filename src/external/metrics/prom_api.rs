//! A Prometheus HTTP API query result (`/api/v1/query`, and
//! `/api/v1/query_range` read at its last point), as `curl` saves it:
//!
//! ```json
//! {"status":"success","data":{"resultType":"vector","result":[
//!   {"metric":{"__name__":"envoy_cluster_upstream_rq_total","envoy_cluster_name":"…"},
//!    "value":[1435781451.781,"137"]}]}}
//! ```
//!
//! Each series becomes a [`Sample`] at the position of its value, so the
//! metrics readers treat it as an exposition line. The series must keep
//! their `__name__`: `rate()`, `increase()` and `sum()` drop it, and a
//! counter whose name is gone cannot be told from another.

use super::exposition::Sample;
use crate::external::node::{Cx, get, items, str_at};
use crate::input::error::LoadError;
use crate::input::{Node, Value};

/// What a result gave: its series as samples, and the latest evaluation
/// time among them (Unix seconds), which says when the counters were read.
pub(crate) struct Read {
    pub samples: Vec<Sample>,
    pub(crate) evaluated_at: Option<f64>,
    /// `vector`, `matrix`, or the kind that holds no series.
    pub(crate) result_type: String,
}

/// Whether a document is an API result: `status` and `data.resultType`,
/// or an error answer (`status: error` with `errorType`), which is read to
/// say so rather than skipped as not understood.
pub(crate) fn detect(root: &Node) -> bool {
    let Some(status) = get(root, "status").and_then(str_at) else {
        return false;
    };
    let typed = get(root, "data")
        .and_then(|d| get(d, "resultType"))
        .and_then(str_at)
        .is_some();
    typed || (status == "error" && get(root, "errorType").is_some())
}

fn number(n: &Node) -> Option<f64> {
    match &n.value {
        Value::Int(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        Value::Str(s) => s.trim().parse().ok(),
        _ => None,
    }
}

pub(crate) fn read(cx: Cx, root: &Node) -> Result<Read, LoadError> {
    let status = get(root, "status").and_then(str_at).unwrap_or("");
    if status != "success" {
        let why = get(root, "error")
            .and_then(str_at)
            .unwrap_or("no `error` given");
        return Err(cx
            .f
            .error(
                root.pos,
                format!("a Prometheus API result with status `{status}`: {why}"),
            )
            .with_help("save the answer of a query that succeeded"));
    }
    let data = get(root, "data").unwrap_or(root);
    let result_type = get(data, "resultType")
        .and_then(str_at)
        .unwrap_or("")
        .to_owned();
    let mut out = Read {
        samples: Vec::new(),
        evaluated_at: None,
        result_type: result_type.clone(),
    };
    if result_type != "vector" && result_type != "matrix" {
        return Ok(out);
    }
    for series in items(get(data, "result").unwrap_or(data)) {
        if out.samples.len() >= super::exposition::MAX_SAMPLES {
            return Err(cx.f.error(
                series.pos,
                format!(
                    "more than {} series in one result",
                    super::exposition::MAX_SAMPLES
                ),
            ));
        }
        let Some(metric) = get(series, "metric") else {
            return Err(cx
                .f
                .error(series.pos, "a series without `metric`")
                .with_help("save the API's answer as it came"));
        };
        let mut labels = Vec::new();
        let mut name = None;
        if let Value::Map(entries) = &metric.value {
            if entries.len() > super::exposition::MAX_LABELS + 1 {
                return Err(cx.f.error(
                    metric.pos,
                    format!(
                        "more than {} labels on one series",
                        super::exposition::MAX_LABELS
                    ),
                ));
            }
            for (k, v) in entries {
                let (Some(k), Some(v)) = (str_at(k), str_at(v)) else {
                    return Err(cx.f.expected(v, "a label value (a string)"));
                };
                if k == "__name__" {
                    name = Some(v.to_owned());
                } else {
                    labels.push((k.to_owned(), v.to_owned()));
                }
            }
        }
        // A matrix (a range query) is read at its last point: counters are
        // cumulative, so the last point holds all the window has.
        let point = match result_type.as_str() {
            "vector" => get(series, "value"),
            _ => get(series, "values").and_then(|v| items(v).last()),
        };
        let Some(point) = point else {
            return Err(cx.f.error(
                series.pos,
                "a series without its value (`[time, \"value\"]`)",
            ));
        };
        let pair = items(point);
        let (Some(ts), Some(v)) = (pair.first(), pair.get(1)) else {
            return Err(cx.f.expected(point, "`[time, \"value\"]`"));
        };
        let Some(value) = number(v) else {
            return Err(cx.f.expected(v, "a sample value (a number in a string)"));
        };
        let Some(name) = name else {
            let cluster = labels
                .iter()
                .any(|(k, _)| super::envoy::CLUSTER_LABELS.contains(&k.as_str()));
            if cluster {
                return Err(cx
                    .f
                    .error(metric.pos, "an Envoy cluster series without `__name__`: which counter it is cannot be told")
                    .with_help("query the counters themselves, e.g. `{__name__=~\"envoy_cluster_upstream_rq_(total|retry|retry_overflow|retry_limit_exceeded)\"}`: rate(), increase() and sum() drop the name"));
            }
            continue;
        };
        if let Some(t) = number(ts) {
            out.evaluated_at = Some(out.evaluated_at.map_or(t, |e: f64| e.max(t)));
        }
        out.samples.push(Sample {
            name,
            labels,
            value,
            at: series.pos,
            value_at: v.pos,
        });
    }
    Ok(out)
}
