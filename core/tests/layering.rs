//! The core's layering, checked from its source: no import circles between modules (the cache's
//! submodules counted one by one), and the codec layer never names a module above it.
//!
//! Owns: reading `core/src` as text (a test may; the core itself never does I/O). Never: a
//! judgement of the code inside a module.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

/// Modules below the cache: the formats and Kafka's in-memory log. None may name a module of
/// `UPPER`.
const LOWER: &[&str] = &[
    "error",
    "wire",
    "model",
    "record",
    "key",
    "partitioner",
    "json",
    "batch",
    "checkpoint",
    "compaction",
];
const UPPER: &[&str] = &[
    "cache",
    "plan",
    "host",
    "inspect",
    "index",
    "projection",
    "tiered",
    "format",
    "partition_scan",
];

/// The module a file is (`cache::epoch`, `record`, `batch`), or None for tests and the crate root.
fn module_of(rel: &Path) -> Option<String> {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    if parts.is_empty() || parts == ["lib"] || parts.iter().any(|p| p == "tests" || p == "testing")
    {
        return None;
    }
    // Only the cache is split into nodes of its own; other directories count as one module.
    if parts[0] != "cache" {
        parts.truncate(1);
    }
    Some(parts.join("::"))
}

/// Non-test source: everything before the first `#[cfg(test)]` module, without line comments.
fn code(text: &str) -> String {
    let end = text.find("#[cfg(test)]\nmod ").unwrap_or(text.len());
    text[..end]
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn idents_after(text: &str, prefix: &str) -> Vec<String> {
    let mut out = Vec::new();
    for (i, _) in text.match_indices(prefix) {
        let rest = &text[i + prefix.len()..];
        if let Some(group) = rest.strip_prefix('{') {
            // `use crate::{a::X, b, c::{..}}`: the first segment of each item
            let mut depth = 0;
            let mut item_start = true;
            let mut word = String::new();
            for c in group.chars() {
                match c {
                    '{' => depth += 1,
                    '}' if depth == 0 => break,
                    '}' => depth -= 1,
                    ',' if depth == 0 => item_start = true,
                    c if c.is_alphanumeric() || c == '_' => {
                        if item_start {
                            word.push(c);
                        }
                    }
                    _ => {
                        if !word.is_empty() {
                            out.push(std::mem::take(&mut word));
                            item_start = false;
                        }
                    }
                }
            }
            if !word.is_empty() {
                out.push(word);
            }
        } else {
            let w: String = rest
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect();
            if !w.is_empty() {
                out.push(w);
            }
        }
    }
    out
}

fn graph() -> BTreeMap<String, BTreeSet<String>> {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    let mut dirs = vec![src.clone()];
    while let Some(d) = dirs.pop() {
        for e in std::fs::read_dir(&d).into_iter().flatten().flatten() {
            let p = e.path();
            if p.is_dir() {
                dirs.push(p);
            } else if p.extension().is_some_and(|x| x == "rs") {
                files.push(p);
            }
        }
    }
    let top: BTreeSet<String> = files
        .iter()
        .filter_map(|p| p.strip_prefix(&src).ok().and_then(module_of))
        .map(|m| m.split("::").next().unwrap_or("").to_owned())
        .collect();
    let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
    for p in &files {
        let Some(me) = p.strip_prefix(&src).ok().and_then(module_of) else {
            continue;
        };
        let text = code(&std::fs::read_to_string(p).unwrap_or_default());
        let mine = me.split("::").next().unwrap_or("").to_owned();
        let mut deps = BTreeSet::new();
        for w in idents_after(&text, "crate::") {
            if top.contains(&w) && w != mine {
                deps.insert(w);
            }
        }
        if mine == "cache" && me != "cache" {
            for w in idents_after(&text, "super::") {
                let d = format!("cache::{w}");
                if d != me && files.iter().any(|f| f.ends_with(format!("cache/{w}.rs"))) {
                    deps.insert(d);
                }
            }
        }
        g.entry(me).or_default().extend(deps);
    }
    g
}

fn reaches(g: &BTreeMap<String, BTreeSet<String>>, from: &str, to: &str) -> bool {
    let mut seen = BTreeSet::new();
    let mut todo = vec![from.to_owned()];
    while let Some(m) = todo.pop() {
        for d in g.get(&m).into_iter().flatten() {
            // a dependency on `cache` is one on every cache module
            let expanded: Vec<String> = if d == "cache" {
                g.keys()
                    .filter(|k| k.starts_with("cache"))
                    .cloned()
                    .collect()
            } else {
                vec![d.clone()]
            };
            for e in expanded {
                if e == to {
                    return true;
                }
                if seen.insert(e.clone()) {
                    todo.push(e);
                }
            }
        }
    }
    false
}

#[test]
fn no_module_reaches_itself() {
    let g = graph();
    assert!(g.len() > 20, "read too few modules: {g:?}");
    let circles: Vec<&String> = g.keys().filter(|m| reaches(&g, m, m)).collect();
    assert!(
        circles.is_empty(),
        "import circles through {circles:?}: {g:#?}"
    );
}

#[test]
fn the_codec_layer_names_nothing_above_it() {
    let g = graph();
    for low in LOWER {
        let deps = g.get(*low).cloned().unwrap_or_default();
        let above: Vec<&String> = deps
            .iter()
            .filter(|d| UPPER.contains(&d.split("::").next().unwrap_or("")))
            .collect();
        assert!(above.is_empty(), "{low} depends on {above:?}");
    }
    // the cache's leaf names no other cache module
    let leaf = g.get("cache::segment").cloned().unwrap_or_default();
    assert!(
        leaf.iter().all(|d| !d.starts_with("cache")),
        "cache::segment depends on {leaf:?}"
    );
}
