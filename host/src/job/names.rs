//! The names of a job's settings: strategies, crossovers, bound policies, formulas and
//! thesis variants, each in one table, read and written the same way.

use crate::error::{Error, Result};
use gpude_device::variant::{
    GenerationCount, IndexDraw, LambdaDraw, LambdaRange, MutationForm, ThesisVariant,
};
use gpude_device::{BoundPolicy, Crossover, Formula, Strategy};

/// Names of strategies, crossovers and bound policies, in one table each.
pub const STRATEGIES: [(&str, Strategy); 11] = [
    ("thesis", Strategy::Thesis),
    ("rand1", Strategy::Rand1),
    ("best1", Strategy::Best1),
    ("current-to-best1", Strategy::CurrentToBest1),
    ("rand2", Strategy::Rand2),
    ("best2", Strategy::Best2),
    ("jde", Strategy::Jde),
    ("jade", Strategy::Jade),
    ("shade", Strategy::Shade),
    ("lshade", Strategy::LShade),
    ("jso", Strategy::Jso),
];

pub const CROSSOVERS: [(&str, Crossover); 2] = [
    ("bin", Crossover::Binomial),
    ("exp", Crossover::Exponential),
];

pub const BOUND_POLICIES: [(&str, BoundPolicy); 5] = [
    ("init-only", BoundPolicy::InitOnly),
    ("clip", BoundPolicy::Clip),
    ("reflect", BoundPolicy::Reflect),
    ("resample", BoundPolicy::Resample),
    ("midpoint", BoundPolicy::Midpoint),
];

pub(crate) fn lookup<V: Copy>(kind: &'static str, table: &[(&str, V)], name: &str) -> Result<V> {
    let n = name.trim().to_ascii_lowercase();
    table
        .iter()
        .find(|(k, _)| *k == n)
        .map(|(_, v)| *v)
        .ok_or_else(|| Error::UnknownName {
            kind,
            name: crate::error::clip(name),
            known: table.iter().map(|(k, _)| *k).collect::<Vec<_>>().join(", "),
        })
}

pub(crate) fn name_of<V: Copy + PartialEq>(table: &[(&'static str, V)], v: V) -> &'static str {
    table
        .iter()
        .find(|(_, x)| *x == v)
        .map(|(k, _)| *k)
        .unwrap_or("?")
}

/// Parses a strategy name: `thesis`, `rand1`, … (`rand1bin`, `rand/1/bin` and the like
/// also name a crossover, returned second).
pub fn parse_strategy(name: &str) -> Result<(Strategy, Option<Crossover>)> {
    let n: String = name
        .trim()
        .to_ascii_lowercase()
        .chars()
        .filter(|c| *c != '/')
        .collect();
    for (cname, c) in CROSSOVERS {
        if let Some(Ok(s)) = n
            .strip_suffix(cname)
            .map(|b| lookup("strategy", &STRATEGIES, b))
        {
            return Ok((s, Some(c)));
        }
    }
    lookup("strategy", &STRATEGIES, &n)
        .map(|s| (s, None))
        .map_err(|_| Error::UnknownName {
            kind: "strategy",
            name: crate::error::clip(name),
            known: "thesis, rand1, best1, current-to-best1, rand2, best2 (optionally with a crossover suffix: rand1bin, rand1exp), jde, jade, shade, lshade, jso".into(),
        })
}

pub fn parse_crossover(name: &str) -> Result<Crossover> {
    lookup("crossover", &CROSSOVERS, name)
}

pub const FORMULAS: [(&str, Formula); 2] =
    [("exact", Formula::Exact), ("textbook", Formula::Textbook)];

pub fn parse_formula(name: &str) -> Result<Formula> {
    lookup("formula", &FORMULAS, name)
}

pub fn formula_name(f: Formula) -> &'static str {
    name_of(&FORMULAS, f)
}

pub fn parse_bounds(name: &str) -> Result<BoundPolicy> {
    lookup("bound policy", &BOUND_POLICIES, name)
}

pub fn strategy_name(s: Strategy) -> &'static str {
    name_of(&STRATEGIES, s)
}

pub fn crossover_name(c: Crossover) -> &'static str {
    name_of(&CROSSOVERS, c)
}

pub fn bounds_name(b: BoundPolicy) -> &'static str {
    name_of(&BOUND_POLICIES, b)
}

/// The keys and values of a thesis variant's names, the default's first.
pub const VARIANT_KEYS: [(&str, &[&str]); 5] = [
    ("indices", &["free", "rejection"]),
    ("lambda", &["open-closed", "closed-open"]),
    ("lambda-draw", &["per-component", "per-individual"]),
    ("mutation", &["plain", "fma", "fma-inner", "from-best"]),
    ("generations", &["gmax", "plus-one"]),
];

/// The `key=value` names of a variant's fields that differ from the default, joined
/// by commas (`default` for the default), as [`parse_variant`] reads them.
pub fn variant_name(v: ThesisVariant) -> String {
    let d = ThesisVariant::DEFAULT;
    let values = [
        (v.indices != d.indices).then_some(v.indices as usize),
        (v.lambda != d.lambda).then_some(v.lambda as usize),
        (v.lambda_draw != d.lambda_draw).then_some(v.lambda_draw as usize),
        (v.mutation != d.mutation).then_some(v.mutation as usize),
        (v.generations != d.generations).then_some(v.generations as usize),
    ];
    let parts: Vec<String> = VARIANT_KEYS
        .iter()
        .zip(values)
        .filter_map(|((k, names), n)| n.map(|n| format!("{k}={}", names[n])))
        .collect();
    if parts.is_empty() {
        "default".into()
    } else {
        parts.join(",")
    }
}

/// Parses a thesis variant: `default`, or a comma list of `key=value` (keys and values in
/// [`VARIANT_KEYS`]; a key given twice is an error), such as
/// `indices=rejection,lambda=closed-open,mutation=fma,generations=plus-one`.
pub fn parse_variant(list: &str) -> Result<ThesisVariant> {
    let mut v = ThesisVariant::DEFAULT;
    let trimmed = list.trim();
    if trimmed.eq_ignore_ascii_case("default") {
        return Ok(v);
    }
    let keys = || {
        VARIANT_KEYS
            .iter()
            .map(|(k, names)| format!("{k}={}", names.join("|")))
            .collect::<Vec<_>>()
            .join(", ")
    };
    let mut seen = [false; VARIANT_KEYS.len()];
    let mut any = false;
    for item in trimmed.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        any = true;
        let Some((key, value)) = item.split_once('=') else {
            return Err(Error::invalid(
                "thesis variant",
                crate::error::clip(item),
                format!(
                    "key=value items separated by commas, or default; the keys: {}",
                    keys()
                ),
            ));
        };
        let (key, value) = (
            key.trim().to_ascii_lowercase(),
            value.trim().to_ascii_lowercase(),
        );
        let Some(k) = VARIANT_KEYS.iter().position(|(name, _)| *name == key) else {
            return Err(Error::UnknownName {
                kind: "thesis variant key",
                name: crate::error::clip(&key),
                known: VARIANT_KEYS
                    .iter()
                    .map(|(k, _)| *k)
                    .collect::<Vec<_>>()
                    .join(", "),
            });
        };
        if std::mem::replace(&mut seen[k], true) {
            return Err(Error::invalid(
                "thesis variant",
                crate::error::clip(trimmed),
                format!("each key once (\"{key}\" is given twice)"),
            ));
        }
        let names = VARIANT_KEYS[k].1;
        let Some(n) = names.iter().position(|name| *name == value) else {
            return Err(Error::UnknownName {
                kind: match k {
                    0 => "value of indices",
                    1 => "value of lambda",
                    2 => "value of lambda-draw",
                    3 => "value of mutation",
                    _ => "value of generations",
                },
                name: crate::error::clip(&value),
                known: names.join(", "),
            });
        };
        match k {
            0 => v.indices = [IndexDraw::Free, IndexDraw::Rejection][n],
            1 => v.lambda = [LambdaRange::OpenClosed, LambdaRange::ClosedOpen][n],
            2 => v.lambda_draw = [LambdaDraw::PerComponent, LambdaDraw::PerIndividual][n],
            3 => {
                v.mutation = [
                    MutationForm::Plain,
                    MutationForm::Fma,
                    MutationForm::FmaInner,
                    MutationForm::FromBest,
                ][n]
            }
            _ => v.generations = [GenerationCount::GMax, GenerationCount::PlusOne][n],
        }
    }
    if !any {
        return Err(Error::invalid(
            "thesis variant",
            format!("{list:?}"),
            format!(
                "default, or key=value items separated by commas; the keys: {}",
                keys()
            ),
        ));
    }
    Ok(v)
}
