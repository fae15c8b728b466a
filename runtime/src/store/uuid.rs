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
///
/// On the path of every id of every response, so it reads the 32 digits at
/// their fixed places rather than scanning the text.
pub(crate) fn uuid_bytes(uuid: &str) -> Option<[u8; 16]> {
    /// Where each byte's two digits start in the 8-4-4-4-12 form.
    const DIGITS: [usize; 16] = [0, 2, 4, 6, 9, 11, 14, 16, 19, 21, 24, 26, 28, 30, 32, 34];
    let text = uuid.as_bytes();
    if text.len() != UUID_LEN || [8, 13, 18, 23].iter().any(|&i| text[i] != b'-') {
        return None;
    }
    let mut out = [0u8; 16];
    // Any digit that is not one sets the high bits; checked once at the end.
    let mut not_hex = 0u8;
    for (byte, &at) in out.iter_mut().zip(&DIGITS) {
        let (hi, lo) = (
            HEX_VALUE[usize::from(text[at])],
            HEX_VALUE[usize::from(text[at + 1])],
        );
        not_hex |= hi | lo;
        *byte = (hi << 4) | (lo & 0x0f);
    }
    (not_hex & 0xf0 == 0).then_some(out)
}

/// The value of each hex digit, either case; `0xff` for every other byte.
const HEX_VALUE: [u8; 256] = {
    let mut table = [0xffu8; 256];
    let mut i = 0;
    while i < 10 {
        table[b'0' as usize + i] = i as u8;
        i += 1;
    }
    let mut i = 0;
    while i < 6 {
        table[b'a' as usize + i] = 10 + i as u8;
        table[b'A' as usize + i] = 10 + i as u8;
        i += 1;
    }
    table
};

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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uuid_bytes_reads_any_case_and_only_the_8_4_4_4_12_form() {
        let uuid = "D290f1ee-6c54-4b01-90e6-d701748f0851";
        let bytes = uuid_bytes(uuid).expect("a UUID");
        assert_eq!(bytes[0], 0xd2);
        assert_eq!(bytes[15], 0x51);
        assert_eq!(uuid_text(&bytes), uuid.to_ascii_lowercase());
        for not_one in [
            "",
            "d290f1ee6c544b0190e6d701748f0851",
            "d290f1ee-6c54-4b01-90e6-d701748f085",
            "d290f1ee-6c54-4b01-90e6-d701748f08512",
            "d290f1ee-6c54-4b01-90e6_d701748f0851",
            "d290f1ee-6c54-4b01-90e6-d701748f085g",
            "d290f1e-e6c54-4b01-90e6-d701748f0851",
            "d290f1ee-6c54-4b01-90e6-d701748f08ü",
        ] {
            assert_eq!(uuid_bytes(not_one), None, "{not_one}");
            assert!(!is_uuid_bytes(not_one.as_bytes()), "{not_one}");
        }
    }
}
