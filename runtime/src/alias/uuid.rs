//! The syntax of UUIDs: canonical text, 16 bytes, and whole UUID tokens in text.

pub(crate) const UUID_LEN: usize = 36;

pub(crate) fn is_uuid_bytes(b: &[u8]) -> bool {
    b.len() == UUID_LEN
        && b.iter().enumerate().all(|(i, c)| match i {
            8 | 13 | 18 | 23 => *c == b'-',
            _ => c.is_ascii_hexdigit(),
        })
}

/// `s` in lowercase if it is exactly a UUID.
pub(crate) fn canonical_uuid(s: &str) -> Option<String> {
    is_uuid_bytes(s.as_bytes()).then(|| s.to_ascii_lowercase())
}

/// Byte ranges of the whole UUID tokens of `text`: a UUID not preceded or
/// followed by a letter, digit, `-` or `_`.
pub(crate) fn uuid_tokens(text: &str) -> Vec<(usize, usize)> {
    let bytes = text.as_bytes();
    let is_word = |c: u8| c.is_ascii_alphanumeric() || c == b'-' || c == b'_';
    let mut out = Vec::new();
    let mut i = 0;
    while i + UUID_LEN <= bytes.len() {
        let at_boundary = i == 0 || !is_word(bytes[i - 1]);
        if at_boundary
            && is_uuid_bytes(&bytes[i..i + UUID_LEN])
            && bytes.get(i + UUID_LEN).is_none_or(|c| !is_word(*c))
        {
            out.push((i, i + UUID_LEN));
            i += UUID_LEN;
        } else {
            i += 1;
        }
    }
    out
}

/// The 16 bytes of a UUID in its text form (any letter case).
pub(crate) fn uuid_bytes(uuid: &str) -> Option<[u8; 16]> {
    if !is_uuid_bytes(uuid.as_bytes()) {
        return None;
    }
    let mut out = [0u8; 16];
    let mut digits = uuid.bytes().filter(|b| *b != b'-');
    for byte in &mut out {
        let hi = hex_value(digits.next()?)?;
        let lo = hex_value(digits.next()?)?;
        *byte = (hi << 4) | lo;
    }
    Some(out)
}

fn hex_value(b: u8) -> Option<u8> {
    match b {
        b'0'..=b'9' => Some(b - b'0'),
        b'a'..=b'f' => Some(b - b'a' + 10),
        b'A'..=b'F' => Some(b - b'A' + 10),
        _ => None,
    }
}

/// A UUID's canonical text: lowercase, hyphenated 8-4-4-4-12.
pub(crate) fn uuid_text(uuid: &[u8; 16]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(UUID_LEN);
    for (i, byte) in uuid.iter().enumerate() {
        if matches!(i, 4 | 6 | 8 | 10) {
            out.push('-');
        }
        out.push(char::from(HEX[usize::from(byte >> 4)]));
        out.push(char::from(HEX[usize::from(byte & 15)]));
    }
    out
}
