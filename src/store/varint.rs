//! LEB128 varints: seven bits a byte, the low bits first, the top bit set on every byte but
//! the last. The streams of sorted keys that the lean pass keeps on disk and that MPI ranks
//! send each other write the differences from one key to the next with them: small
//! differences take one byte.

/// Appends `v` to `out` (one to ten bytes).
pub(crate) fn push(out: &mut Vec<u8>, mut v: u64) {
    while v >= 0x80 {
        out.push(v as u8 | 0x80);
        v >>= 7;
    }
    out.push(v as u8);
}

/// The varint that starts at `bytes[*at]`, with `*at` moved past it; None if the bytes end
/// inside it or it does not fit in 64 bits.
pub(crate) fn read(bytes: &[u8], at: &mut usize) -> Option<u64> {
    let mut v = 0u64;
    let mut shift = 0u32;
    loop {
        let b = *bytes.get(*at)?;
        *at += 1;
        let bits = u64::from(b & 0x7f);
        // The tenth byte holds bit 63 alone.
        if shift > 63 || (shift == 63 && bits > 1) {
            return None;
        }
        v |= bits << shift;
        if b & 0x80 == 0 {
            return Some(v);
        }
        shift += 7;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_width_reads_back_and_nothing_else_does() {
        let values = [
            0,
            1,
            0x7f,
            0x80,
            0x3fff,
            0x4000,
            u64::from(u32::MAX),
            u64::MAX,
        ];
        let mut bytes = Vec::new();
        for &v in &values {
            push(&mut bytes, v);
        }
        // One byte for 7 bits, two for 14, ..., ten for 64.
        assert_eq!(bytes.len(), 1 + 1 + 1 + 2 + 2 + 3 + 5 + 10);
        let mut at = 0;
        for &v in &values {
            assert_eq!(read(&bytes, &mut at), Some(v));
        }
        assert_eq!(at, bytes.len());
        assert_eq!(read(&bytes, &mut at), None, "past the end");
        // Cut inside the last varint.
        let mut at = bytes.len() - 10;
        assert_eq!(read(&bytes[..bytes.len() - 1], &mut at), None);
        // Eleven bytes, or a tenth byte above bit 63: not a 64-bit value.
        assert_eq!(
            read(
                &[0xff; 10].iter().chain(&[0]).copied().collect::<Vec<_>>(),
                &mut 0
            ),
            None
        );
        assert_eq!(
            read(
                &[0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x02],
                &mut 0
            ),
            None
        );
    }
}
