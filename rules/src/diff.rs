//! Field-by-field differences between two serializable values, for errors that
//! must name what differs (e.g. two rule sets: `max_plies 500 vs 300`) instead
//! of printing both values whole.

use serde::Serialize;
use serde_json::Value;

/// The fields in which `a` and `b` differ, one entry per differing leaf:
/// `path a_value vs b_value`, e.g. `max_plies 500 vs 300` or
/// `thoat EitherOrder vs Jumping`. Nested objects give dotted paths
/// (`model.blocks 6 vs 2`); a field present on one side only shows `(absent)`
/// on the other; `null` is written `none`. Empty when the values are equal.
///
/// Values that cannot be serialized to JSON give a single entry saying so.
pub fn field_differences<T: Serialize + ?Sized, U: Serialize + ?Sized>(a: &T, b: &U) -> Vec<String> {
    match (serde_json::to_value(a), serde_json::to_value(b)) {
        (Ok(a), Ok(b)) => value_differences(&a, &b),
        (Err(e), _) | (_, Err(e)) => vec![format!("(values not comparable: {e})")],
    }
}

/// As [`field_differences`], on values already in JSON form.
pub fn value_differences(a: &Value, b: &Value) -> Vec<String> {
    let mut out = Vec::new();
    walk("", Some(a), Some(b), &mut out);
    out
}

/// `"rules differ (checkpoint vs config): max_plies 500 vs 300; ..."`: the
/// usual sentence for a non-empty difference list (`what` names the values,
/// `labels` the two sides in the order of the differences).
pub fn describe_differences(what: &str, labels: (&str, &str), differences: &[String]) -> String {
    format!("{what} differ ({} vs {}): {}", labels.0, labels.1, differences.join("; "))
}

fn show(v: Option<&Value>) -> String {
    match v {
        None => "(absent)".into(),
        Some(Value::Null) => "none".into(),
        Some(Value::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

fn walk(path: &str, a: Option<&Value>, b: Option<&Value>, out: &mut Vec<String>) {
    if a == b {
        return;
    }
    if let (Some(Value::Object(x)), Some(Value::Object(y))) = (a, b) {
        let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
        keys.sort();
        keys.dedup();
        for k in keys {
            let p = if path.is_empty() { k.clone() } else { format!("{path}.{k}") };
            walk(&p, x.get(k), y.get(k), out);
        }
        return;
    }
    let sep = if path.is_empty() { "" } else { " " };
    out.push(format!("{path}{sep}{} vs {}", show(a), show(b)));
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::jetan::{JetanRules, Thoat};

    #[test]
    fn names_each_differing_switch() {
        let a = JetanRules::default();
        let b = JetanRules { max_plies: 300, thoat: Thoat::Jumping, no_capture_limit: Some(40), ..a };
        let d = field_differences(&a, &b);
        assert_eq!(d, ["max_plies 500 vs 300", "no_capture_limit none vs 40", "thoat EitherOrder vs Jumping"]);
        assert!(field_differences(&a, &a).is_empty());
        assert_eq!(
            describe_differences("rules", ("checkpoint", "config"), &d[..1]),
            "rules differ (checkpoint vs config): max_plies 500 vs 300"
        );
    }

    #[test]
    fn nested_absent_and_scalar_values() {
        let a = serde_json::json!({"model": {"blocks": 6, "channels": 64}, "x": 1});
        let b = serde_json::json!({"model": {"blocks": 2, "channels": 64}, "y": [1]});
        assert_eq!(value_differences(&a, &b), ["model.blocks 6 vs 2", "x 1 vs (absent)", "y (absent) vs [1]"]);
        assert_eq!(value_differences(&serde_json::json!(1), &serde_json::json!("a")), ["1 vs a"]);
    }
}
