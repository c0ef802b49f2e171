//! How remote object keys name segments: templates with named fields, and the presets operators
//! meet.
//!
//! Owns: the template language (`{topic}`, `{topic_id}`, `{partition}`, `{segment_id}`,
//! `{start_offset}` or `{start_offset:N}` for N zero-padded digits, `{file}`; everything else is
//! literal), its parsing with typed errors, the presets, and matching a key against a layout
//! (a key that matches no template, or matches one in two ways, is reported, never guessed).
//! Never: listing a store, or deciding what a match means for a segment (`reconcile` does).
//!
//! A layout spec is `TEMPLATE[|TEMPLATE...][;size=FILE][;require=FILE,FILE...]`: the first
//! template a key matches wins; `size=FILE` names the object whose size is the segment's
//! `segmentSizeInBytes` (only where the store keeps the log as written); `require=` the files a
//! complete segment has.

use crate::error::{Error, ErrorKind, Result};
use crate::model::Uuid;

/// A named field of a template.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Field {
    Topic,
    TopicId,
    Partition,
    SegmentId,
    /// The segment's start offset, in exactly `width` zero-padded digits when given.
    StartOffset {
        width: Option<usize>,
    },
    /// Which of a segment's files the object holds (a file name or a suffix).
    File,
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Part {
    Lit(String),
    Field(Field),
}

/// One parsed template.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    pub text: String,
    parts: Vec<Part>,
}

/// What a key's template match says (borrowing the key's text).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyFields<'k> {
    pub topic: Option<&'k str>,
    pub topic_id: Option<Uuid>,
    pub partition: Option<i32>,
    pub segment_id: Uuid,
    pub start_offset: Option<i64>,
    /// The `{file}` field; empty when the template has none.
    pub file: &'k str,
}

/// A set of templates and what a complete segment looks like under them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Layout {
    /// The preset's name, or `custom`.
    pub name: String,
    pub templates: Vec<Template>,
    /// The file whose object size must equal `segmentSizeInBytes`; `None`: no size comparison
    /// (the store transforms the log: compression, encryption, chunking).
    pub size_file: Option<String>,
    /// The files every complete segment has; a finished segment missing any is dangling.
    pub required_files: Vec<String>,
}

/// The presets: name, where it comes from, spec.
pub const PRESETS: [(&str, &str, &str); 3] = [
    (
        "aiven",
        "Aiven's tiered-storage-for-apache-kafka (ObjectKeyFactory): \
         <prefix><topic>-<topicId>/<partition>/<startOffset:20>-<segmentId>.<suffix>; \
         the log is chunked and may be compressed or encrypted, so no size comparison",
        "{topic}-{topic_id}/{partition}/{start_offset:20}-{segment_id}.{file};require=log,rsm-manifest",
    ),
    (
        "kafka-local",
        "Kafka's own LocalTieredStorage (RemoteLogSegmentFileset): \
         <topic>-<partition>-<topicId>/<startOffset>-<segmentId>.<suffix>, files copied as written",
        "{topic}-{partition}-{topic_id}/{start_offset}-{segment_id}.{file}\
         ;size=log;require=log,index,timeindex,leader_epoch_checkpoint,snapshot",
    ),
    (
        "rlmeta-file",
        "this project's test FileRemoteStorageManager: \
         <topic>-<partition>-<topicId>/<segmentId>/<file> (and <segmentId>.tmp/ while a copy runs)",
        "{topic}-{partition}-{topic_id}/{segment_id}/{file}|{topic}-{partition}-{topic_id}/{segment_id}.tmp/{file}\
         ;size=segment.log;require=segment.log,offset.index,time.index,producer.snapshot,leader-epoch.checkpoint",
    ),
];

fn bad(what: &str, why: impl Into<String>) -> Error {
    Error::field(ErrorKind::InvalidLayout, what, why)
}

impl Template {
    /// Parses one template; errors name the template and the character where it fails.
    pub fn parse(text: &str) -> Result<Template> {
        let mut parts = Vec::new();
        let mut lit = String::new();
        let mut rest = text;
        let mut at = 0usize;
        let mut seen: Vec<&str> = Vec::new();
        while let Some(c) = rest.chars().next() {
            match c {
                '{' => {
                    let Some(close) = rest.find('}') else {
                        return Err(bad(
                            "template",
                            format!("'{{' at character {at} of template {text:?} is never closed"),
                        ));
                    };
                    let inner = &rest[1..close];
                    let (name, spec) = match inner.split_once(':') {
                        Some((n, s)) => (n, Some(s)),
                        None => (inner, None),
                    };
                    let field = match (name, spec) {
                        ("topic", None) => Field::Topic,
                        ("topic_id", None) => Field::TopicId,
                        ("partition", None) => Field::Partition,
                        ("segment_id", None) => Field::SegmentId,
                        ("file", None) => Field::File,
                        ("start_offset", None) => Field::StartOffset { width: None },
                        ("start_offset", Some(w)) => match w.parse::<usize>() {
                            Ok(w) if (1..=20).contains(&w) => Field::StartOffset { width: Some(w) },
                            _ => {
                                return Err(bad(
                                    "template",
                                    format!(
                                        "{{start_offset:{w}}} in template {text:?}: the width must be 1 to 20 digits"
                                    ),
                                ));
                            }
                        },
                        _ => {
                            return Err(bad(
                                "template",
                                format!(
                                    "unknown field {{{inner}}} at character {at} of template {text:?} \
                                     (fields: topic, topic_id, partition, segment_id, start_offset[:N], file)"
                                ),
                            ));
                        }
                    };
                    if seen.contains(&name) {
                        return Err(bad(
                            "template",
                            format!("field {{{name}}} appears twice in template {text:?}"),
                        ));
                    }
                    seen.push(name);
                    if lit.is_empty() && matches!(parts.last(), Some(Part::Field(_))) {
                        return Err(bad(
                            "template",
                            format!(
                                "fields {{{name}}} and the one before it touch at character {at} of template {text:?}: \
                                 a key could split between them in more than one way"
                            ),
                        ));
                    }
                    if !lit.is_empty() {
                        parts.push(Part::Lit(std::mem::take(&mut lit)));
                    }
                    parts.push(Part::Field(field));
                    at += close + 1;
                    rest = &rest[close + 1..];
                }
                '}' => {
                    return Err(bad(
                        "template",
                        format!("'}}' at character {at} of template {text:?} closes nothing"),
                    ));
                }
                _ => {
                    lit.push(c);
                    at += c.len_utf8();
                    rest = &rest[c.len_utf8()..];
                }
            }
        }
        if !lit.is_empty() {
            parts.push(Part::Lit(lit));
        }
        if !seen.contains(&"segment_id") {
            return Err(bad(
                "template",
                format!(
                    "template {text:?} has no {{segment_id}}: objects could not be tied to segments"
                ),
            ));
        }
        Ok(Template {
            text: text.to_owned(),
            parts,
        })
    }

    /// The fields of `key` if it matches in exactly one way; `Err(true)` if it matches in more
    /// than one, `Err(false)` if in none.
    fn match_key<'k>(&self, key: &'k str) -> std::result::Result<KeyFields<'k>, bool> {
        let mut caps = Caps::default();
        let mut found: Option<Caps> = None;
        let n = walk(&self.parts, key.as_bytes(), 0, &mut caps, &mut found);
        match (n, found) {
            (1, Some(c)) => c.into_fields(key).ok_or(false),
            (0, _) => Err(false),
            _ => Err(true),
        }
    }
}

impl Template {
    /// The template as an anchored regular expression of the syntax RE2, Java and Trino share
    /// (the query of [`super::sql`]): each field a capturing group of the characters and lengths
    /// [`lengths`] allows it, longest first (`lazy`: shortest first), literals escaped. Returns
    /// the pattern and each field's group number (1-based), in the template's order. Under the
    /// greedy pattern the engine's first match is the split this matcher tries first; a key the
    /// greedy and the lazy pattern split differently matches in more than one way.
    pub fn regex(&self, lazy: bool) -> (String, Vec<(Field, usize)>) {
        let q = if lazy { "?" } else { "" };
        let mut re = String::from("^");
        let mut groups = Vec::new();
        for part in &self.parts {
            match part {
                Part::Lit(l) => {
                    for c in l.chars() {
                        if "\\.^$|?*+()[]{}".contains(c) {
                            re.push('\\');
                        }
                        re.push(c);
                    }
                }
                Part::Field(f) => {
                    groups.push((*f, groups.len() + 1));
                    re.push_str(&match f {
                        // any 22 URL-safe base64 characters, as the matcher counts splits;
                        // whether they are a uuid Kafka prints is checked after (`into_fields`)
                        Field::TopicId | Field::SegmentId => "([A-Za-z0-9_-]{22})".to_owned(),
                        Field::Partition => format!("([0-9]{{1,10}}{q})"),
                        Field::StartOffset { width: Some(w) } => format!("([0-9]{{{w}}})"),
                        Field::StartOffset { width: None } => format!("([0-9]{{1,19}}{q})"),
                        Field::Topic => format!("([A-Za-z0-9._-]{{1,249}}{q})"),
                        Field::File => format!("([^/]+{q})"),
                    });
                }
            }
        }
        // \z, not $: Java's and joni's $ also match before a final line break
        re.push_str("\\z");
        (re, groups)
    }
}

/// Byte ranges of the fields matched so far.
#[derive(Clone, Copy, Default)]
struct Caps {
    topic: Option<(usize, usize)>,
    topic_id: Option<(usize, usize)>,
    partition: Option<(usize, usize)>,
    segment_id: Option<(usize, usize)>,
    start_offset: Option<(usize, usize)>,
    file: Option<(usize, usize)>,
}

impl Caps {
    fn set(&mut self, f: Field, r: (usize, usize)) {
        let slot = match f {
            Field::Topic => &mut self.topic,
            Field::TopicId => &mut self.topic_id,
            Field::Partition => &mut self.partition,
            Field::SegmentId => &mut self.segment_id,
            Field::StartOffset { .. } => &mut self.start_offset,
            Field::File => &mut self.file,
        };
        *slot = Some(r);
    }

    fn into_fields(self, key: &str) -> Option<KeyFields<'_>> {
        let s = |r: Option<(usize, usize)>| r.and_then(|(a, b)| key.get(a..b));
        Some(KeyFields {
            topic: s(self.topic),
            topic_id: s(self.topic_id).map(Uuid::parse).transpose().ok()?,
            partition: s(self.partition).map(str::parse).transpose().ok()?,
            segment_id: Uuid::parse(s(self.segment_id)?).ok()?,
            start_offset: s(self.start_offset).map(str::parse).transpose().ok()?,
            file: s(self.file).unwrap_or_default(),
        })
    }
}

fn is_uuid_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_'
}

fn is_topic_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.'
}

/// The lengths a field may take at `pos` of `key`, longest first.
fn lengths(f: Field, key: &[u8], pos: usize) -> (usize, usize) {
    let run = |ok: fn(u8) -> bool, max: usize| {
        key[pos..].iter().take(max).take_while(|b| ok(**b)).count()
    };
    match f {
        Field::TopicId | Field::SegmentId => {
            if run(is_uuid_char, 22) == 22 {
                (22, 22)
            } else {
                (1, 0)
            }
        }
        Field::Partition => (1, run(|b| b.is_ascii_digit(), 10)),
        Field::StartOffset { width: Some(w) } => {
            if run(|b| b.is_ascii_digit(), w) == w {
                (w, w)
            } else {
                (1, 0)
            }
        }
        Field::StartOffset { width: None } => (1, run(|b| b.is_ascii_digit(), 19)),
        Field::Topic => (1, run(is_topic_char, 249)),
        Field::File => (1, key[pos..].iter().take_while(|b| **b != b'/').count()),
    }
}

/// Counts the ways `parts` match `key[pos..]` (stopping at 2), keeping the first in `found`.
fn walk(parts: &[Part], key: &[u8], pos: usize, caps: &mut Caps, found: &mut Option<Caps>) -> u32 {
    let Some((first, rest)) = parts.split_first() else {
        if pos == key.len() {
            if found.is_none() {
                *found = Some(*caps);
            }
            return 1;
        }
        return 0;
    };
    match first {
        Part::Lit(l) => {
            if key[pos..].starts_with(l.as_bytes()) {
                walk(rest, key, pos + l.len(), caps, found)
            } else {
                0
            }
        }
        Part::Field(f) => {
            let (lo, hi) = lengths(*f, key, pos);
            let mut n = 0;
            for len in (lo..=hi).rev() {
                // A following literal must start right after the field.
                if let Some(Part::Lit(l)) = rest.first() {
                    if !key[pos + len..].starts_with(l.as_bytes()) {
                        continue;
                    }
                }
                let saved = *caps;
                caps.set(*f, (pos, pos + len));
                n += walk(rest, key, pos + len, caps, found);
                *caps = saved;
                if n >= 2 {
                    break;
                }
            }
            n
        }
    }
}

/// How a key fared against a layout.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum KeyMatch<'k> {
    Matched(KeyFields<'k>),
    /// No template matches.
    NoMatch,
    /// A template matches in more than one way (its text given).
    Ambiguous(String),
}

impl Layout {
    /// A preset by name, or a spec (see the module doc).
    pub fn parse(spec: &str) -> Result<Layout> {
        if let Some((name, _, s)) = PRESETS.iter().find(|(n, _, _)| *n == spec) {
            let mut l = Layout::parse_spec(s)?;
            l.name = (*name).to_owned();
            return Ok(l);
        }
        if !spec.contains('{') {
            let names: Vec<&str> = PRESETS.iter().map(|p| p.0).collect();
            return Err(bad(
                "layout",
                format!(
                    "{spec:?} is neither a preset ({}) nor a template (it has no {{field}})",
                    names.join(", ")
                ),
            ));
        }
        Layout::parse_spec(spec)
    }

    fn parse_spec(spec: &str) -> Result<Layout> {
        let mut sections = spec.split(';');
        let templates = sections
            .next()
            .unwrap_or_default()
            .split('|')
            .map(Template::parse)
            .collect::<Result<Vec<_>>>()?;
        let mut layout = Layout {
            name: "custom".to_owned(),
            templates,
            size_file: None,
            required_files: Vec::new(),
        };
        for s in sections {
            match s.split_once('=') {
                Some(("size", f)) if !f.is_empty() => layout.size_file = Some(f.to_owned()),
                Some(("require", fs)) => {
                    layout.required_files = fs
                        .split(',')
                        .filter(|f| !f.is_empty())
                        .map(str::to_owned)
                        .collect();
                }
                _ => {
                    return Err(bad(
                        "layout",
                        format!(
                            "option {s:?} of layout {spec:?}: expected size=FILE or require=FILE,FILE"
                        ),
                    ));
                }
            }
        }
        let has_file = layout
            .templates
            .iter()
            .all(|t| t.parts.contains(&Part::Field(Field::File)));
        if !has_file && (layout.size_file.is_some() || !layout.required_files.is_empty()) {
            return Err(bad(
                "layout",
                format!(
                    "layout {spec:?} names files (size= or require=) but a template has no {{file}}"
                ),
            ));
        }
        Ok(layout)
    }

    /// The spec text of this layout (templates and options), as `parse` reads it.
    pub fn spec(&self) -> String {
        let mut s: Vec<&str> = self.templates.iter().map(|t| t.text.as_str()).collect();
        let mut out = s.join("|");
        if let Some(f) = &self.size_file {
            out.push_str(";size=");
            out.push_str(f);
        }
        if !self.required_files.is_empty() {
            s = self.required_files.iter().map(String::as_str).collect();
            out.push_str(";require=");
            out.push_str(&s.join(","));
        }
        out
    }

    /// Matches a key (the listing prefix already taken off) against the templates in order.
    pub fn match_key<'k>(&self, key: &'k str) -> KeyMatch<'k> {
        for t in &self.templates {
            match t.match_key(key) {
                Ok(f) => return KeyMatch::Matched(f),
                Err(true) => return KeyMatch::Ambiguous(t.text.clone()),
                Err(false) => {}
            }
        }
        KeyMatch::NoMatch
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const SEG: &str = "tqimKeZwStOEOwRzT3L5oQ";
    const TID: &str = "MWJ6FHTfRYy67jzwZdeqSQ";

    #[test]
    fn presets_parse_and_match_their_own_keys() {
        let aiven = Layout::parse("aiven").unwrap();
        let k = format!("my-topic.v1-{TID}/7/00000000000000001234-{SEG}.log");
        let KeyMatch::Matched(f) = aiven.match_key(&k) else {
            panic!("{k}")
        };
        assert_eq!(f.topic, Some("my-topic.v1"));
        assert_eq!(f.topic_id.unwrap().to_string(), TID);
        assert_eq!((f.partition, f.start_offset), (Some(7), Some(1234)));
        assert_eq!((f.segment_id.to_string(), f.file), (SEG.to_owned(), "log"));
        // 19 digits instead of 20: not this layout.
        let short = format!("t-{TID}/7/0000000000000001234-{SEG}.log");
        assert_eq!(aiven.match_key(&short), KeyMatch::NoMatch);

        let local = Layout::parse("kafka-local").unwrap();
        let k = format!("a-1-2-{TID}/55-{SEG}.leader_epoch_checkpoint");
        let KeyMatch::Matched(f) = local.match_key(&k) else {
            panic!("{k}")
        };
        assert_eq!((f.topic, f.partition), (Some("a-1"), Some(2)));
        assert_eq!(
            (f.start_offset, f.file),
            (Some(55), "leader_epoch_checkpoint")
        );

        let file = Layout::parse("rlmeta-file").unwrap();
        for k in [
            format!("t-0-{TID}/{SEG}/segment.log"),
            format!("t-0-{TID}/{SEG}.tmp/segment.log"),
        ] {
            assert!(matches!(file.match_key(&k), KeyMatch::Matched(_)), "{k}");
        }
        assert_eq!(file.match_key("journal.txt"), KeyMatch::NoMatch);
        assert_eq!(file.size_file.as_deref(), Some("segment.log"));
    }

    #[test]
    fn bad_templates_are_typed_errors_naming_what_is_wrong() {
        for (spec, needle) in [
            ("{topic}/{file}", "has no {segment_id}"),
            ("{topic}/{segment_id", "never closed"),
            ("{topic}}/{segment_id}", "closes nothing"),
            ("{topik}/{segment_id}", "unknown field {topik}"),
            ("{topic}{segment_id}", "touch"),
            ("{segment_id}/{segment_id}", "twice"),
            ("{segment_id}/{start_offset:0}", "width"),
            ("{segment_id};size=log", "has no {file}"),
            ("{segment_id}/{file};colour=red", "option"),
            ("nosuchpreset", "neither a preset"),
        ] {
            let e = Layout::parse(spec).unwrap_err();
            assert_eq!(e.kind(), ErrorKind::InvalidLayout, "{spec}");
            assert!(e.message().contains(needle), "{spec}: {}", e.message());
        }
    }

    #[test]
    fn an_ambiguous_key_is_reported_not_guessed() {
        let l = Layout::parse("{topic}-{file}/{segment_id}").unwrap();
        assert_eq!(
            l.match_key(&format!("a-b-c/{SEG}")),
            KeyMatch::Ambiguous("{topic}-{file}/{segment_id}".to_owned())
        );
        let key = format!("a-c/{SEG}");
        let KeyMatch::Matched(f) = l.match_key(&key) else {
            panic!()
        };
        assert_eq!((f.topic, f.file), (Some("a"), "c"));
    }

    #[test]
    fn spec_round_trips() {
        for (name, _, spec) in PRESETS {
            let l = Layout::parse(name).unwrap();
            assert_eq!(l.spec(), spec);
            assert_eq!(Layout::parse(&l.spec()).unwrap().templates, l.templates);
        }
    }
}
