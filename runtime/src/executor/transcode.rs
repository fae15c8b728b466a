//! A response's protobuf bytes written straight out as protojson, its ids
//! given aliases as they are met: what decoding into a `DynamicMessage`,
//! walking it and serialising it do, in one pass over the bytes, without
//! building the message.
//!
//! The output is the one `DynamicMessage`'s serialiser writes with default
//! options but for the field names, which are the [`JsonNames`] asked for
//! (proto names by default, else camelCase; fields in number order, fields without presence
//! left out at their default, 64-bit integers as strings, enums by name), and
//! ids meet the alias callback in the order the walk of the decoded message
//! visits them (number order; a map's entries by key). Anything outside the
//! common ground is [`Unsupported`], and the caller takes the `DynamicMessage`
//! path instead: a type with groups or extensions (at [`Transcoder::new`]), and
//! bytes that do not decode cleanly or need protobuf's merge rules (a singular
//! message sent twice, two members of one oneof, an enum number the type does
//! not name). So a transcoded answer is never a guess: where this code could
//! differ from the decoder, it steps aside. Well-known types keep their
//! special JSON by going through `DynamicMessage` one value at a time.

use std::collections::HashMap;
use std::io::Write as _;

use base64::Engine as _;
use prost_reflect::{DynamicMessage, Kind, MessageDescriptor, Value as ProtoValue};

use proto_ai_tools_schema::output::JsonNames;

use crate::alias::FieldPrefix;
use crate::alias::MAX_WALK_DEPTH;

/// The bytes, or the type, need the `DynamicMessage` path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Unsupported;

/// Given an id's prefix and text, appends the alias to write instead to its
/// third argument and returns `true`, or returns `false` to write the text
/// as it is.
pub(crate) type AliasFor<'a> = dyn FnMut(&str, &str, &mut String) -> bool + 'a;

/// How to write one response type, worked out once from its descriptor.
pub(crate) struct Transcoder {
    /// The type it writes (its pool included).
    response: MessageDescriptor,
    /// Every message type the response reaches; the response is the first.
    messages: Vec<MessageLayout>,
}

struct MessageLayout {
    /// Field numbers, ascending; `fields[i]` is the field numbered `numbers[i]`.
    numbers: Vec<u32>,
    fields: Vec<FieldLayout>,
}

struct FieldLayout {
    /// `"jsonName":` and `"proto_name":`, escaped once.
    keys: [Box<str>; 2],
    shape: Shape,
    /// Written whenever present, even at its default (message, oneof member,
    /// `optional`, proto2).
    presence: bool,
    oneof: Option<usize>,
    /// The alias prefix of its strings.
    alias: Option<Box<str>>,
    /// The value a field without presence is left out at.
    default: ProtoValue,
}

enum Shape {
    One(ValueKind),
    List(ValueKind),
    Map { key: Scalar, value: ValueKind },
}

#[derive(Clone)]
enum ValueKind {
    Scalar(Scalar),
    Enum(EnumLayout),
    /// A message written by this code: an index into `messages`.
    Message(usize),
    /// A well-known type, written by `DynamicMessage` for its special JSON.
    WellKnown(MessageDescriptor),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Scalar {
    Double,
    Float,
    Int32,
    Int64,
    Uint32,
    Uint64,
    Sint32,
    Sint64,
    Fixed32,
    Fixed64,
    Sfixed32,
    Sfixed64,
    Bool,
    String,
    Bytes,
}

#[derive(Clone)]
struct EnumLayout {
    names: HashMap<i32, Box<str>>,
    /// `google.protobuf.NullValue`, written as `null`.
    is_null_value: bool,
    default: i32,
}

/// One field occurrence on the wire.
#[derive(Clone, Copy)]
enum Wire<'b> {
    Varint(u64),
    Fixed64(u64),
    Fixed32(u32),
    Len(&'b [u8]),
}

/// A scalar as decoded, before it is written.
#[derive(Clone, Copy)]
enum Decoded<'b> {
    Bool(bool),
    I32(i32),
    I64(i64),
    U32(u32),
    U64(u64),
    F32(f32),
    F64(f64),
    Str(&'b str),
    Bytes(&'b [u8]),
}

impl Transcoder {
    /// The layout of `response`, or `None` when it is a well-known type, a
    /// type it reaches has groups or extensions, or an alias prefix sits
    /// inside a well-known type.
    pub(crate) fn new(response: &MessageDescriptor, prefixes: &[FieldPrefix]) -> Option<Self> {
        // A well-known type as the whole response (`Empty`, `Struct`, ...)
        // has JSON of its own, which `DynamicMessage` writes.
        if is_well_known(response.full_name())
            || prefixes.iter().any(|fp| is_well_known(fp.message))
        {
            return None;
        }
        let mut builder = Builder {
            index: HashMap::new(),
            messages: Vec::new(),
            prefixes,
        };
        builder.message(response)?;
        Some(Transcoder {
            response: response.clone(),
            // Every slot is laid out once `message` returns.
            messages: builder.messages.into_iter().collect::<Option<_>>()?,
        })
    }

    /// Whether this writes `response`: the same type of the same pool, not
    /// only a type of the same name.
    pub(crate) fn is_for(&self, response: &MessageDescriptor) -> bool {
        self.response == *response
    }

    /// Writes the message in `bytes` as JSON to `out`, its fields under
    /// `names`, each UUID of an alias-carrying field replaced by what
    /// `alias` gives for it.
    pub(crate) fn write(
        &self,
        bytes: &[u8],
        out: &mut Vec<u8>,
        alias: &mut AliasFor<'_>,
        names: JsonNames,
    ) -> Result<(), Unsupported> {
        Writer {
            transcoder: self,
            out,
            alias,
            names,
            spare: Vec::new(),
            alias_text: String::new(),
        }
        .message(0, bytes, 0)
    }
}

struct Builder<'p> {
    index: HashMap<String, usize>,
    /// `None` while a type's fields are being laid out (recursion).
    messages: Vec<Option<MessageLayout>>,
    prefixes: &'p [FieldPrefix],
}

impl Builder<'_> {
    fn message(&mut self, desc: &MessageDescriptor) -> Option<usize> {
        if let Some(&i) = self.index.get(desc.full_name()) {
            return Some(i);
        }
        if desc.extensions().len() > 0 {
            return None;
        }
        let i = self.messages.len();
        self.index.insert(desc.full_name().to_owned(), i);
        self.messages.push(None);
        let mut oneofs: Vec<String> = Vec::new();
        let mut numbers = Vec::new();
        let mut fields = Vec::new();
        for field in desc.fields() {
            if field.is_group() {
                return None;
            }
            let shape = if field.is_map() {
                let Kind::Message(entry) = field.kind() else {
                    return None;
                };
                let key = scalar(&entry.map_entry_key_field().kind())?;
                let value = self.value_kind(&entry.map_entry_value_field().kind())?;
                Shape::Map { key, value }
            } else if field.is_list() {
                Shape::List(self.value_kind(&field.kind())?)
            } else {
                Shape::One(self.value_kind(&field.kind())?)
            };
            let oneof = field.containing_oneof().map(|o| {
                let name = o.full_name().to_owned();
                oneofs.iter().position(|n| *n == name).unwrap_or_else(|| {
                    oneofs.push(name);
                    oneofs.len() - 1
                })
            });
            let alias = self
                .prefixes
                .iter()
                .find(|fp| fp.message == desc.full_name() && fp.field == field.name())
                .map(|fp| fp.prefix.into());
            numbers.push(field.number());
            fields.push(FieldLayout {
                keys: [JsonNames::Camel, JsonNames::Proto].map(|n| key_text(n.name(&field))),
                shape,
                presence: field.supports_presence(),
                oneof,
                alias,
                default: field.default_value(),
            });
        }
        self.messages[i] = Some(MessageLayout { numbers, fields });
        Some(i)
    }

    fn value_kind(&mut self, kind: &Kind) -> Option<ValueKind> {
        Some(match kind {
            Kind::Message(m) if is_well_known(m.full_name()) => ValueKind::WellKnown(m.clone()),
            Kind::Message(m) => ValueKind::Message(self.message(m)?),
            Kind::Enum(e) => ValueKind::Enum(EnumLayout {
                names: e.values().map(|v| (v.number(), v.name().into())).collect(),
                is_null_value: e.full_name() == "google.protobuf.NullValue",
                default: e.default_value().number(),
            }),
            other => ValueKind::Scalar(scalar(other)?),
        })
    }
}

fn scalar(kind: &Kind) -> Option<Scalar> {
    Some(match kind {
        Kind::Double => Scalar::Double,
        Kind::Float => Scalar::Float,
        Kind::Int32 => Scalar::Int32,
        Kind::Int64 => Scalar::Int64,
        Kind::Uint32 => Scalar::Uint32,
        Kind::Uint64 => Scalar::Uint64,
        Kind::Sint32 => Scalar::Sint32,
        Kind::Sint64 => Scalar::Sint64,
        Kind::Fixed32 => Scalar::Fixed32,
        Kind::Fixed64 => Scalar::Fixed64,
        Kind::Sfixed32 => Scalar::Sfixed32,
        Kind::Sfixed64 => Scalar::Sfixed64,
        Kind::Bool => Scalar::Bool,
        Kind::String => Scalar::String,
        Kind::Bytes => Scalar::Bytes,
        Kind::Message(_) | Kind::Enum(_) => return None,
    })
}

/// The types whose JSON `DynamicMessage` writes in a form of its own.
fn is_well_known(full_name: &str) -> bool {
    full_name.starts_with("google.protobuf.")
}

fn key_text(name: &str) -> Box<str> {
    let mut key = serde_json::to_string(name).unwrap_or_default();
    key.push(':');
    key.into()
}

struct Writer<'t, 'o, 'a, 'c, 'b> {
    transcoder: &'t Transcoder,
    out: &'o mut Vec<u8>,
    alias: &'a mut AliasFor<'c>,
    /// The names fields are written under.
    names: JsonNames,
    /// Emptied occurrence lists, kept for the next message: one allocation
    /// per nesting level instead of one per message.
    spare: Vec<Vec<(usize, Wire<'b>)>>,
    /// The alias being written, reused.
    alias_text: String,
}

impl<'b> Writer<'_, '_, '_, '_, 'b> {
    fn message(&mut self, index: usize, bytes: &'b [u8], depth: usize) -> Result<(), Unsupported> {
        if depth > MAX_WALK_DEPTH {
            return Err(Unsupported);
        }
        let layout = &self.transcoder.messages[index];
        let mut seen = self.spare.pop().unwrap_or_default();
        scan(layout, bytes, &mut seen)?;
        // Fields come in number order from protobuf encoders; others sort here
        // (stable, so repeated values keep their order).
        if !seen.is_sorted_by_key(|(field, _)| *field) {
            seen.sort_by_key(|(field, _)| *field);
        }
        // The oneofs a member was written of: few, so a list.
        let mut oneofs_written: Vec<usize> = Vec::new();
        self.out.push(b'{');
        let mut first = true;
        let mut at = 0;
        while at < seen.len() {
            let field_index = seen[at].0;
            let end = at
                + seen[at..]
                    .iter()
                    .take_while(|(f, _)| *f == field_index)
                    .count();
            let field = &layout.fields[field_index];
            let values = seen[at..end].iter().map(|(_, wire)| *wire);
            at = end;
            let mark = self.out.len();
            if !first {
                self.out.push(b',');
            }
            let key = &field.keys[usize::from(self.names == JsonNames::Proto)];
            self.out.extend_from_slice(key.as_bytes());
            let written = match &field.shape {
                Shape::One(kind) => self.one(field, kind, values, depth)?,
                Shape::List(kind) => self.list(field, kind, values, depth)?,
                Shape::Map { key, value } => self.map(*key, value, values, depth)?,
            };
            if !written {
                self.out.truncate(mark);
                continue;
            }
            if let Some(oneof) = field.oneof {
                if oneofs_written.contains(&oneof) {
                    // Two members of one oneof: the decoder keeps the last one sent.
                    return Err(Unsupported);
                }
                oneofs_written.push(oneof);
            }
            first = false;
        }
        self.out.push(b'}');
        seen.clear();
        self.spare.push(seen);
        Ok(())
    }

    /// A singular field: its last occurrence (the decoder's rule), unless
    /// it is a message sent more than once, which the decoder merges.
    fn one(
        &mut self,
        field: &FieldLayout,
        kind: &ValueKind,
        values: impl Iterator<Item = Wire<'b>>,
        depth: usize,
    ) -> Result<bool, Unsupported> {
        let mut last = None;
        let mut last_scalar = None;
        for wire in values {
            if last.is_some() && matches!(kind, ValueKind::Message(_) | ValueKind::WellKnown(_)) {
                return Err(Unsupported);
            }
            // Every occurrence must decode, as the decoder reads them all.
            if let ValueKind::Scalar(s) = kind {
                last_scalar = Some(decode(*s, wire)?);
            }
            last = Some(wire);
        }
        let Some(wire) = last else {
            return Ok(false);
        };
        match kind {
            ValueKind::Message(index) => {
                self.message(*index, len(wire)?, depth + 1)?;
                Ok(true)
            }
            ValueKind::WellKnown(desc) => {
                self.well_known(desc, len(wire)?)?;
                Ok(true)
            }
            ValueKind::Enum(e) => {
                let number = enum_number(wire)?;
                if !field.presence && ProtoValue::EnumNumber(number) == field.default {
                    return Ok(false);
                }
                write_enum(self.out, e, number)?;
                Ok(true)
            }
            ValueKind::Scalar(_) => {
                let Some(value) = last_scalar else {
                    return Ok(false);
                };
                if !field.presence && is_default(value, &field.default) {
                    return Ok(false);
                }
                self.scalar(value, field.alias.as_deref());
                Ok(true)
            }
        }
    }

    /// A repeated field: every occurrence in order, packed or not.
    fn list(
        &mut self,
        field: &FieldLayout,
        kind: &ValueKind,
        values: impl Iterator<Item = Wire<'b>>,
        depth: usize,
    ) -> Result<bool, Unsupported> {
        self.out.push(b'[');
        let mut count = 0usize;
        for wire in values {
            match kind {
                ValueKind::Message(index) => {
                    self.separate(&mut count);
                    self.message(*index, len(wire)?, depth + 1)?;
                }
                ValueKind::WellKnown(desc) => {
                    self.separate(&mut count);
                    self.well_known(desc, len(wire)?)?;
                }
                ValueKind::Enum(e) => {
                    for number in packed(Scalar::Int32, wire)? {
                        let number = enum_number(number?)?;
                        self.separate(&mut count);
                        write_enum(self.out, e, number)?;
                    }
                }
                ValueKind::Scalar(s) => {
                    for one in packed(*s, wire)? {
                        let value = decode(*s, one?)?;
                        self.separate(&mut count);
                        self.scalar(value, field.alias.as_deref());
                    }
                }
            }
        }
        self.out.push(b']');
        Ok(count > 0)
    }

    /// A map: its entries by key (the order the alias walk visits them), the
    /// last entry of a key winning, as the decoder keeps it.
    fn map(
        &mut self,
        key_scalar: Scalar,
        kind: &ValueKind,
        values: impl Iterator<Item = Wire<'b>>,
        depth: usize,
    ) -> Result<bool, Unsupported> {
        let mut entries: Vec<(Decoded<'b>, Option<Wire<'b>>)> = Vec::new();
        for wire in values {
            let mut entry = len(wire)?;
            let mut key = None;
            let mut value = None;
            while !entry.is_empty() {
                let (number, wire) = field(&mut entry)?;
                match number {
                    1 => key = Some(decode(key_scalar, wire)?),
                    2 => value = Some(wire),
                    _ => {}
                }
            }
            let key = match key {
                Some(key) => key,
                None => decode_default(key_scalar),
            };
            entries.push((key, value));
        }
        entries.sort_by(|a, b| compare_keys(&a.0, &b.0));
        // Stable sort: of equal keys, the one sent last is last.
        let mut kept: Vec<(Decoded<'b>, Option<Wire<'b>>)> = Vec::with_capacity(entries.len());
        for entry in entries {
            match kept.last_mut() {
                Some(last) if compare_keys(&last.0, &entry.0).is_eq() => *last = entry,
                _ => kept.push(entry),
            }
        }
        self.out.push(b'{');
        let mut count = 0usize;
        for (key, value) in kept {
            self.separate(&mut count);
            write_map_key(self.out, key);
            self.out.push(b':');
            match kind {
                ValueKind::Message(index) => {
                    let bytes = value.map(len).transpose()?.unwrap_or_default();
                    self.message(*index, bytes, depth + 1)?;
                }
                ValueKind::WellKnown(desc) => {
                    let bytes = value.map(len).transpose()?.unwrap_or_default();
                    self.well_known(desc, bytes)?;
                }
                ValueKind::Enum(e) => {
                    let number = value.map(enum_number).transpose()?.unwrap_or(e.default);
                    write_enum(self.out, e, number)?;
                }
                ValueKind::Scalar(s) => {
                    let value = match value {
                        Some(wire) => decode(*s, wire)?,
                        None => decode_default(*s),
                    };
                    // Map values carry no alias, as the walk leaves them.
                    self.scalar(value, None);
                }
            }
        }
        self.out.push(b'}');
        Ok(count > 0)
    }

    fn separate(&mut self, count: &mut usize) {
        if *count > 0 {
            self.out.push(b',');
        }
        *count += 1;
    }

    /// A well-known type in its own JSON form, written by `DynamicMessage`.
    fn well_known(&mut self, desc: &MessageDescriptor, bytes: &'b [u8]) -> Result<(), Unsupported> {
        let message = DynamicMessage::decode(desc.clone(), bytes).map_err(|_| Unsupported)?;
        let mut serializer = serde_json::Serializer::new(&mut *self.out);
        message
            .serialize_with_options(&mut serializer, &self.names.serialize_options())
            .map_err(|_| Unsupported)
    }

    fn scalar(&mut self, value: Decoded<'_>, alias: Option<&str>) {
        if let (Decoded::Str(text), Some(prefix)) = (value, alias) {
            self.alias_text.clear();
            if (self.alias)(prefix, text, &mut self.alias_text) {
                write_json_str(self.out, &self.alias_text);
                return;
            }
        }
        write_scalar(self.out, value);
    }
}

/// The occurrences of the known fields in `bytes`, in wire order; unknown
/// fields are skipped, as the decoder keeps them out of the JSON.
fn scan<'b>(
    layout: &MessageLayout,
    mut bytes: &'b [u8],
    seen: &mut Vec<(usize, Wire<'b>)>,
) -> Result<(), Unsupported> {
    while !bytes.is_empty() {
        let (number, wire) = field(&mut bytes)?;
        if let Ok(i) = layout.numbers.binary_search(&number) {
            seen.push((i, wire));
        }
    }
    Ok(())
}

/// The next field of `bytes`: its number and value.
fn field<'b>(bytes: &mut &'b [u8]) -> Result<(u32, Wire<'b>), Unsupported> {
    let key = varint(bytes)?;
    let number = u32::try_from(key >> 3).map_err(|_| Unsupported)?;
    if number == 0 {
        return Err(Unsupported);
    }
    let wire = match key & 7 {
        0 => Wire::Varint(varint(bytes)?),
        1 => Wire::Fixed64(u64::from_le_bytes(fixed(bytes)?)),
        2 => {
            let len = usize::try_from(varint(bytes)?).map_err(|_| Unsupported)?;
            Wire::Len(take(bytes, len)?)
        }
        5 => Wire::Fixed32(u32::from_le_bytes(fixed(bytes)?)),
        // Groups, and wire types that do not exist.
        _ => return Err(Unsupported),
    };
    Ok((number, wire))
}

fn varint(bytes: &mut &[u8]) -> Result<u64, Unsupported> {
    let mut value = 0u64;
    for (i, &b) in bytes.iter().enumerate().take(10) {
        value |= u64::from(b & 0x7f) << (7 * i);
        if b < 0x80 {
            *bytes = &bytes[i + 1..];
            return Ok(value);
        }
    }
    Err(Unsupported)
}

fn fixed<const N: usize>(bytes: &mut &[u8]) -> Result<[u8; N], Unsupported> {
    take(bytes, N)?.try_into().map_err(|_| Unsupported)
}

fn take<'b>(bytes: &mut &'b [u8], len: usize) -> Result<&'b [u8], Unsupported> {
    if bytes.len() < len {
        return Err(Unsupported);
    }
    let (head, tail) = bytes.split_at(len);
    *bytes = tail;
    Ok(head)
}

fn len(wire: Wire<'_>) -> Result<&[u8], Unsupported> {
    match wire {
        Wire::Len(bytes) => Ok(bytes),
        _ => Err(Unsupported),
    }
}

fn enum_number(wire: Wire<'_>) -> Result<i32, Unsupported> {
    match wire {
        // Truncation is protobuf's rule for an int32 sent as a varint.
        #[allow(clippy::cast_possible_truncation)]
        Wire::Varint(v) => Ok(v as i32),
        _ => Err(Unsupported),
    }
}

/// A scalar from its wire value; a wire type the field does not have is
/// the decoder's error.
#[allow(clippy::cast_possible_truncation, clippy::cast_possible_wrap)]
fn decode(scalar: Scalar, wire: Wire<'_>) -> Result<Decoded<'_>, Unsupported> {
    Ok(match (scalar, wire) {
        (Scalar::Double, Wire::Fixed64(v)) => Decoded::F64(f64::from_bits(v)),
        (Scalar::Float, Wire::Fixed32(v)) => Decoded::F32(f32::from_bits(v)),
        (Scalar::Int32, Wire::Varint(v)) => Decoded::I32(v as i32),
        (Scalar::Int64, Wire::Varint(v)) => Decoded::I64(v as i64),
        (Scalar::Uint32, Wire::Varint(v)) => Decoded::U32(v as u32),
        (Scalar::Uint64, Wire::Varint(v)) => Decoded::U64(v),
        (Scalar::Sint32, Wire::Varint(v)) => {
            let n = v as u32;
            Decoded::I32((n >> 1) as i32 ^ -((n & 1) as i32))
        }
        (Scalar::Sint64, Wire::Varint(v)) => Decoded::I64((v >> 1) as i64 ^ -((v & 1) as i64)),
        (Scalar::Fixed32, Wire::Fixed32(v)) => Decoded::U32(v),
        (Scalar::Fixed64, Wire::Fixed64(v)) => Decoded::U64(v),
        (Scalar::Sfixed32, Wire::Fixed32(v)) => Decoded::I32(v as i32),
        (Scalar::Sfixed64, Wire::Fixed64(v)) => Decoded::I64(v as i64),
        (Scalar::Bool, Wire::Varint(v)) => Decoded::Bool(v != 0),
        (Scalar::String, Wire::Len(b)) => {
            Decoded::Str(std::str::from_utf8(b).map_err(|_| Unsupported)?)
        }
        (Scalar::Bytes, Wire::Len(b)) => Decoded::Bytes(b),
        _ => return Err(Unsupported),
    })
}

/// The value of a map entry's key or value that was not sent.
fn decode_default(scalar: Scalar) -> Decoded<'static> {
    match scalar {
        Scalar::Double => Decoded::F64(0.0),
        Scalar::Float => Decoded::F32(0.0),
        Scalar::Int32 | Scalar::Sint32 | Scalar::Sfixed32 => Decoded::I32(0),
        Scalar::Int64 | Scalar::Sint64 | Scalar::Sfixed64 => Decoded::I64(0),
        Scalar::Uint32 | Scalar::Fixed32 => Decoded::U32(0),
        Scalar::Uint64 | Scalar::Fixed64 => Decoded::U64(0),
        Scalar::Bool => Decoded::Bool(false),
        Scalar::String => Decoded::Str(""),
        Scalar::Bytes => Decoded::Bytes(&[]),
    }
}

/// Whether `value` equals a field's default, by the decoder's comparison
/// (so `-0.0` is a default and `NaN` is not).
fn is_default(value: Decoded<'_>, default: &ProtoValue) -> bool {
    match value {
        Decoded::Bool(v) => *default == ProtoValue::Bool(v),
        Decoded::I32(v) => *default == ProtoValue::I32(v),
        Decoded::I64(v) => *default == ProtoValue::I64(v),
        Decoded::U32(v) => *default == ProtoValue::U32(v),
        Decoded::U64(v) => *default == ProtoValue::U64(v),
        Decoded::F32(v) => *default == ProtoValue::F32(v),
        Decoded::F64(v) => *default == ProtoValue::F64(v),
        Decoded::Str(v) => matches!(default, ProtoValue::String(d) if d == v),
        Decoded::Bytes(v) => matches!(default, ProtoValue::Bytes(d) if d.as_ref() == v),
    }
}

/// The elements of one occurrence of a repeated scalar: a packed run, or the
/// one value.
fn packed(scalar: Scalar, wire: Wire<'_>) -> Result<Packed<'_>, Unsupported> {
    let width = match scalar {
        Scalar::String | Scalar::Bytes => None,
        Scalar::Double | Scalar::Fixed64 | Scalar::Sfixed64 => Some(Width::Fixed64),
        Scalar::Float | Scalar::Fixed32 | Scalar::Sfixed32 => Some(Width::Fixed32),
        _ => Some(Width::Varint),
    };
    Ok(match (wire, width) {
        (Wire::Len(run), Some(width)) => Packed {
            one: None,
            run,
            width,
        },
        _ => Packed {
            one: Some(wire),
            run: &[],
            width: Width::Varint,
        },
    })
}

#[derive(Clone, Copy)]
enum Width {
    Varint,
    Fixed32,
    Fixed64,
}

struct Packed<'b> {
    one: Option<Wire<'b>>,
    run: &'b [u8],
    width: Width,
}

impl<'b> Iterator for Packed<'b> {
    type Item = Result<Wire<'b>, Unsupported>;

    fn next(&mut self) -> Option<Self::Item> {
        if let Some(one) = self.one.take() {
            return Some(Ok(one));
        }
        if self.run.is_empty() {
            return None;
        }
        Some(match self.width {
            Width::Varint => varint(&mut self.run).map(Wire::Varint),
            Width::Fixed32 => fixed(&mut self.run).map(|b| Wire::Fixed32(u32::from_le_bytes(b))),
            Width::Fixed64 => fixed(&mut self.run).map(|b| Wire::Fixed64(u64::from_le_bytes(b))),
        })
    }
}

fn compare_keys(a: &Decoded<'_>, b: &Decoded<'_>) -> std::cmp::Ordering {
    match (a, b) {
        (Decoded::Str(a), Decoded::Str(b)) => a.cmp(b),
        (Decoded::Bool(a), Decoded::Bool(b)) => a.cmp(b),
        (Decoded::I32(a), Decoded::I32(b)) => a.cmp(b),
        (Decoded::I64(a), Decoded::I64(b)) => a.cmp(b),
        (Decoded::U32(a), Decoded::U32(b)) => a.cmp(b),
        (Decoded::U64(a), Decoded::U64(b)) => a.cmp(b),
        _ => std::cmp::Ordering::Equal,
    }
}

fn write_json_str(out: &mut Vec<u8>, text: &str) {
    // Writing to a `Vec` cannot fail.
    let _ = serde_json::to_writer(&mut *out, text);
}

fn write_enum(out: &mut Vec<u8>, layout: &EnumLayout, number: i32) -> Result<(), Unsupported> {
    if layout.is_null_value {
        out.extend_from_slice(b"null");
        return Ok(());
    }
    // A number the type does not name: left to the decoder, whose rule for
    // it depends on whether the enum is open.
    let name = layout.names.get(&number).ok_or(Unsupported)?;
    write_json_str(out, name);
    Ok(())
}

/// A scalar as protojson writes it: 64-bit integers as strings, floats that
/// are not finite by name, bytes in standard base64.
fn write_scalar(out: &mut Vec<u8>, value: Decoded<'_>) {
    // Writing to a `Vec` cannot fail.
    let _ = match value {
        Decoded::Bool(v) => out.write_all(if v { b"true" } else { b"false" }),
        Decoded::I32(v) => write!(out, "{v}"),
        Decoded::U32(v) => write!(out, "{v}"),
        Decoded::I64(v) => write!(out, "\"{v}\""),
        Decoded::U64(v) => write!(out, "\"{v}\""),
        Decoded::F32(v) if v.is_finite() => {
            serde_json::to_writer(&mut *out, &v).map_err(Into::into)
        }
        Decoded::F64(v) if v.is_finite() => {
            serde_json::to_writer(&mut *out, &v).map_err(Into::into)
        }
        Decoded::F32(v) => out.write_all(non_finite(v.is_nan(), v > 0.0)),
        Decoded::F64(v) => out.write_all(non_finite(v.is_nan(), v > 0.0)),
        Decoded::Str(v) => {
            write_json_str(out, v);
            Ok(())
        }
        Decoded::Bytes(v) => {
            out.push(b'"');
            out.extend_from_slice(
                base64::engine::general_purpose::STANDARD
                    .encode(v)
                    .as_bytes(),
            );
            out.push(b'"');
            Ok(())
        }
    };
}

fn non_finite(nan: bool, positive: bool) -> &'static [u8] {
    match (nan, positive) {
        (true, _) => b"\"NaN\"",
        (false, true) => b"\"Infinity\"",
        (false, false) => b"\"-Infinity\"",
    }
}

/// A map key as protojson writes it: always a string.
fn write_map_key(out: &mut Vec<u8>, key: Decoded<'_>) {
    match key {
        Decoded::Str(_) => write_scalar(out, key),
        Decoded::Bool(v) => out.extend_from_slice(if v { b"\"true\"" } else { b"\"false\"" }),
        // Writing to a `Vec` cannot fail.
        Decoded::I32(v) => drop(write!(out, "\"{v}\"")),
        Decoded::U32(v) => drop(write!(out, "\"{v}\"")),
        other => write_scalar(out, other),
    }
}
