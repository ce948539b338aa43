//! From a rule's intent to byte edits: find the mapping each change belongs
//! to, decide replace or insert, and refuse what is not safe to edit — a value
//! a preset supplies, a node under an anchor used elsewhere.

use super::doc::{Doc, get};
use super::yaml_edit::{expand, insert, remove_items, set};
use crate::input::yaml::{Node, Value};
use crate::lint::{Change, Edit, Fix, Intent, LayerAt, Section};
use crate::policy::Condition;
use crate::topology::Topology;

/// The fix for `intent`: its edits, or none and the reason it was refused.
/// A fix is made whole or not at all.
pub(crate) fn resolve(t: &Topology, doc: Option<&Doc>, intent: &Intent) -> Fix {
    let result = match (doc, &intent.refused) {
        (_, Some(reason)) => Err(reason.clone()),
        (doc, None) => match doc {
            Some(doc) => intent.changes.iter().try_fold(Vec::new(), |mut edits, c| {
                edits.extend(change(t, doc, c)?);
                Ok(edits)
            }),
            None => Err(format!(
                "`{}` is not a YAML topology file retrylint can edit",
                t.file
            )),
        },
    };
    match result {
        Ok(edits) => Fix {
            description: intent.description.clone(),
            edits,
            refused: None,
        },
        Err(reason) => Fix {
            description: intent.description.clone(),
            edits: Vec::new(),
            refused: Some(reason),
        },
    }
}

fn change(t: &Topology, doc: &Doc, c: &Change) -> Result<Vec<Edit>, String> {
    match c {
        Change::Set {
            at,
            section,
            key,
            value,
        } => set_in(t, doc, *at, *section, key, value),
        Change::SetBackoff { at, fields, whole } => set_backoff(t, doc, *at, fields, *whole),
        Change::RemoveRetryOn { at, conditions } => remove_retry_on(t, doc, *at, conditions),
    }
}

/// How messages name a layer: `the client layer`, `web → api`, `the sidecar
/// layer of web → api`.
fn layer_name(t: &Topology, at: LayerAt) -> String {
    match at.call {
        None => "the client layer".into(),
        Some((s, i)) => {
            let call = &t.services[s].calls[i];
            let edge = format!("{} → {}", t.services[s].name, t.services[call.to].name);
            match at.index {
                0 => format!("the call {edge}"),
                li => format!("the {} layer of {edge}", call.layers[li].name),
            }
        }
    }
}

fn missing(t: &Topology, at: LayerAt) -> String {
    format!("{} could not be found in the file", layer_name(t, at))
}

/// The call's node (a mapping, or a shorthand `- db`).
fn call_node<'d>(t: &Topology, doc: &'d Doc, at: LayerAt) -> Result<&'d Node, String> {
    let (s, i) = at.call.ok_or_else(|| missing(t, at))?;
    doc.call(&t.services[s].name, i)
        .ok_or_else(|| missing(t, at))
}

/// The layer's node: the `client:` value, the call, or the `via` item.
fn layer_node<'d>(t: &Topology, doc: &'d Doc, at: LayerAt) -> Result<&'d Node, String> {
    match (at.call, at.index) {
        (None, _) => doc.top("client").ok_or_else(|| missing(t, at)),
        (Some(_), 0) => call_node(t, doc, at),
        (Some(_), li) => {
            let call = call_node(t, doc, at)?;
            match get(call, "via").map(|(_, v)| &v.value) {
                Some(Value::Seq(items)) => items.get(li - 1).ok_or_else(|| missing(t, at)),
                _ => Err(missing(t, at)),
            }
        }
    }
}

/// The preset a written mapping of the layer's policy builds on.
fn preset_of(retry: &Node) -> Option<&str> {
    match get(retry, "preset").map(|(_, v)| &v.value) {
        Some(Value::Str(s)) => Some(s.as_str()),
        _ => None,
    }
}

fn from_preset(key: &str, preset: &str, what: &str) -> String {
    format!(
        "`{key}` of {what} comes from preset `{preset}`; retrylint does not edit a preset's values (override `{key}` beside the preset yourself, or choose another preset)"
    )
}

/// The layer's written `retry:` mapping, or why there is none to edit.
fn retry_node<'d>(t: &Topology, doc: &'d Doc, at: LayerAt, key: &str) -> Result<&'d Node, String> {
    let what = layer_name(t, at);
    let layer = layer_node(t, doc, at)?;
    if let Value::Str(preset) = &layer.value {
        return Err(from_preset(key, preset, &what));
    }
    let Some((_, retry)) = get(layer, "retry") else {
        return Err(format!("{what} has no `retry:` to edit"));
    };
    if let Value::Str(preset) = &retry.value {
        return Err(from_preset(key, preset, &what));
    }
    Ok(retry)
}

fn set_in(
    t: &Topology,
    doc: &Doc,
    at: LayerAt,
    section: Section,
    key: &str,
    value: &str,
) -> Result<Vec<Edit>, String> {
    let what = layer_name(t, at);
    let edit = match section {
        Section::Call | Section::Layer => {
            let node = if section == Section::Call {
                call_node(t, doc, at)?
            } else {
                layer_node(t, doc, at)?
            };
            match &node.value {
                // `- db`: a call to db with defaults.
                Value::Str(_) if section == Section::Call || at.index == 0 && at.call.is_some() => {
                    Some(expand(doc, node, &["to"], key, value, &what)?)
                }
                // `via: [istio-default]`: a layer named after its preset.
                Value::Str(_) => Some(expand(doc, node, &["name", "retry"], key, value, &what)?),
                _ => set(doc, node, key, value, &what)?,
            }
        }
        Section::Retry => {
            let retry = retry_node(t, doc, at, key)?;
            match (get(retry, key), preset_of(retry)) {
                (None, Some(preset)) => return Err(from_preset(key, preset, &what)),
                _ => set(doc, retry, key, value, &format!("the `retry:` of {what}"))?,
            }
        }
        Section::Breaker | Section::Hedging => {
            let (owner, name) = if section == Section::Breaker {
                (layer_node(t, doc, at)?, "circuit_breaker")
            } else {
                (call_node(t, doc, at)?, "hedging")
            };
            let node = get(owner, name)
                .map(|(_, v)| v)
                .ok_or_else(|| format!("{what} has no `{name}:` to edit"))?;
            set(doc, node, key, value, &format!("the `{name}:` of {what}"))?
        }
    };
    Ok(edit.into_iter().collect())
}

fn set_backoff(
    t: &Topology,
    doc: &Doc,
    at: LayerAt,
    fields: &[(&'static str, String)],
    whole: bool,
) -> Result<Vec<Edit>, String> {
    let what = layer_name(t, at);
    let first = fields.first().map_or("backoff", |f| f.0);
    let retry = retry_node(t, doc, at, first)?;
    let flow = || {
        let inner: Vec<String> = fields.iter().map(|(k, v)| format!("{k}: {v}")).collect();
        format!("{{ {} }}", inner.join(", "))
    };
    let preset = preset_of(retry);
    match get(retry, "backoff") {
        Some((_, b)) if matches!(b.value, Value::Map(_)) => {
            let mut edits = Vec::new();
            for (k, v) in fields {
                if get(b, k).is_none()
                    && let Some(p) = preset
                {
                    return Err(from_preset(&format!("backoff.{k}"), p, &what));
                }
                edits.extend(set(doc, b, k, v, &format!("the `backoff:` of {what}"))?);
            }
            Ok(edits)
        }
        Some((_, b)) if whole => {
            Ok(
                super::yaml_edit::replace(doc, b, &flow(), &format!("the `backoff:` of {what}"))?
                    .into_iter()
                    .collect(),
            )
        }
        Some((_, b)) => Err(format!(
            "the `backoff:` of {what} is written as `{}`; write it as a mapping to add `{first}`",
            doc.written(b)
        )),
        None => match preset {
            Some(p) => Err(from_preset("backoff", p, &what)),
            None if whole => Ok(vec![insert(
                doc,
                retry,
                "backoff",
                &flow(),
                &format!("the `retry:` of {what}"),
            )?]),
            None => Err(format!("{what} has no `backoff:` to edit")),
        },
    }
}

/// A `retry_on` item as the schema reads it.
fn condition(node: &Node) -> Option<Condition> {
    match &node.value {
        Value::Int(n) => n.to_string().parse().ok(),
        Value::Str(s) => s.parse().ok(),
        _ => None,
    }
}

fn remove_retry_on(
    t: &Topology,
    doc: &Doc,
    at: LayerAt,
    conditions: &[Condition],
) -> Result<Vec<Edit>, String> {
    let what = layer_name(t, at);
    let retry = retry_node(t, doc, at, "retry_on")?;
    let Some((key, list)) = get(retry, "retry_on") else {
        return Err(match preset_of(retry) {
            Some(p) => from_preset("retry_on", p, &what),
            None => format!("{what} has no `retry_on:` to edit"),
        });
    };
    let items: Vec<&Node> = match &list.value {
        Value::Seq(items) => items.iter().collect(),
        _ => vec![list],
    };
    let remove: Vec<usize> = items
        .iter()
        .enumerate()
        .filter(|(_, n)| condition(n).is_some_and(|c| conditions.contains(&c)))
        .map(|(i, _)| i)
        .collect();
    remove_items(
        doc,
        key,
        list,
        &remove,
        &format!("the `retry_on:` of {what}"),
    )
}
