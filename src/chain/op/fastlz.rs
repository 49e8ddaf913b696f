//! The length of an input once FastLZ-compressed (level 1), as op-geth's `FlzCompressLen` counts
//! it: Fjord's L1 data fee prices every user transaction of an OP block by the FastLZ size of its
//! encoding.
//!
//! op-geth's function is a port of solady's `LibZip.flzCompress` that emits nothing and only adds
//! up the sizes of the literal runs and matches it would write. This one walks the input the same
//! way, with the same table of where each 3-byte sequence's bucket was last seen (8,192 entries,
//! all zero when a compression starts, so an empty entry means position 0), faster: the table is
//! kept per thread and seldom cleared (see [`Based`]), three bytes are read as one word, and a
//! match is measured 8 bytes at a time. `tests` checks it against a line-by-line port of op-geth's
//! on many inputs.

/// Entries of the table: 13-bit buckets of a 3-byte sequence.
const TABLE: usize = 8192;

/// Where each bucket was last seen, in a table of `u32` positions.
trait LastSeen {
    fn get(&self, slot: usize) -> u32;
    fn set(&mut self, slot: usize, pos: u32);
}

/// A table for one input of 64 KiB or more (op-geth's fresh table); such inputs are rare and
/// their compression outweighs allocating it.
impl LastSeen for [u32; TABLE] {
    #[inline(always)]
    fn get(&self, slot: usize) -> u32 {
        self[slot]
    }

    #[inline(always)]
    fn set(&mut self, slot: usize, pos: u32) {
        self[slot] = pos;
    }
}

/// The table for inputs shorter than 64 KiB, kept per thread and cleared only now and then:
/// each compression is given a `base` above every entry earlier ones wrote, and stores
/// `base + position`, so an entry below `base` is another compression's and reads as 0, a
/// fresh table's (a saturating subtraction: no branch on data). The next compression's base
/// is this one's plus its length; once a base and length would pass 16 bits the table is
/// cleared. For transactions of a few hundred bytes that is once every few hundred
/// compressions, instead of 16 KiB cleared per transaction; and 16 KiB of `u16` entries leave
/// more of the CPU's first-level cache to the replay that runs between two compressions than
/// a table of `u32` does.
struct Based {
    base: u32,
    /// Above every entry written so far (the next compression's base).
    next: u32,
    slots: Box<[u16; TABLE]>,
}

impl LastSeen for Based {
    #[inline(always)]
    fn get(&self, slot: usize) -> u32 {
        u32::from(self.slots[slot]).saturating_sub(self.base)
    }

    #[inline(always)]
    fn set(&mut self, slot: usize, pos: u32) {
        // At most `base + len - 1`, which `start` kept within 16 bits.
        self.slots[slot] = (self.base + pos) as u16;
    }
}

impl Based {
    /// Readies the table for an input of `len` bytes (less than 64 KiB).
    fn start(&mut self, len: u32) {
        if self.next + len > 0x1_0000 {
            self.slots.fill(0);
            // Above the zeroed entries.
            self.next = 1;
        }
        self.base = self.next;
        self.next += len;
    }
}

thread_local! {
    static BASED: std::cell::RefCell<Based> = std::cell::RefCell::new(Based {
        base: 1,
        next: 1,
        slots: Box::new([0; TABLE]),
    });
}

/// The length of `input` once FastLZ-compressed (level 1), as op-geth's `FlzCompressLen`
/// counts it. Go's `uint32` arithmetic is kept, so inputs are assumed shorter than 4 GiB.
pub fn flz_compress_len(input: &[u8]) -> u32 {
    if input.len() < 13 {
        // No position is ever the start of a match: all literals.
        return literal_run_len(input.len() as u32);
    }
    if input.len() > 0xffff {
        return compress_len(input, &mut *Box::new([0u32; TABLE]));
    }
    BASED.with_borrow_mut(|table| {
        table.start(input.len() as u32);
        compress_len(input, table)
    })
}

/// The 3 bytes at `i` as op-geth's `u24` reads them (little-endian), loaded as a word: every
/// position read lies at least 4 bytes before the end.
#[inline(always)]
fn three(input: &[u8], i: u32) -> u32 {
    let i = i as usize;
    debug_assert!(i + 4 <= input.len());
    // SAFETY: `compress_len` reads only positions at most `len - 6`: the walk's positions stay
    // below `limit = len - 13`; a match starting at `pos` is measured from `pos + 3` up to
    // `limit + 9`, so it ends by `limit + 6`, and the two positions seen after it are at most
    // `limit + 7`; a candidate is a position seen earlier. This is the walk's hottest read,
    // twice a byte; the tests compare many lengths with op-geth's, `debug_assert` on.
    let word = unsafe { input.as_ptr().add(i).cast::<[u8; 4]>().read_unaligned() };
    u32::from_le_bytes(word) & 0x00ff_ffff
}

#[inline(always)]
fn bucket(v: u32) -> usize {
    ((v.wrapping_mul(2_654_435_769) >> 19) & 0x1fff) as usize
}

/// op-geth's loop, on an input of at least 13 bytes and a fresh `last_seen`.
fn compress_len(input: &[u8], last_seen: &mut impl LastSeen) -> u32 {
    let len = input.len() as u32;
    // The last 13 bytes are never the start of a match; positions read stay below `len - 4`:
    // the walk stops at `limit`, a match ends by `limit + 9`, and two more are seen after it.
    let limit = len - 13;
    let mut size = 0u32;
    // `anchor`: the first byte not yet emitted (as a literal or in a match).
    let mut anchor = 0u32;
    let mut pos = 2u32;
    // Within 8 KiB every candidate, a position seen earlier, is in the window.
    let windowed = len > 0x2000;
    while pos < limit {
        // Walk forward until the 3 bytes at `pos` were seen within the 8 KiB window.
        let mut candidate;
        loop {
            let seq = three(input, pos);
            let slot = bucket(seq);
            candidate = last_seen.get(slot);
            last_seen.set(slot, pos);
            let distance = pos.wrapping_sub(candidate);
            if pos >= limit {
                break;
            }
            pos += 1;
            if (!windowed || distance <= 0x1fff) && seq == three(input, candidate) {
                break;
            }
        }
        if pos >= limit {
            break;
        }
        pos -= 1;
        if pos > anchor {
            size = size.wrapping_add(literal_run_len(pos - anchor));
        }
        let matched = match_extent(input, candidate + 3, pos + 3, limit + 9);
        size = size.wrapping_add(match_len(matched));
        let end = pos + matched;
        last_seen.set(bucket(three(input, end)), end);
        last_seen.set(bucket(three(input, end + 1)), end + 1);
        pos = end + 2;
        anchor = pos;
    }
    size.wrapping_add(literal_run_len(len.wrapping_sub(anchor)))
}

/// Bytes FastLZ writes for `count` literals: runs of at most 32, each with a 1-byte header.
fn literal_run_len(count: u32) -> u32 {
    let tail = count % 32;
    33 * (count / 32) + if tail == 0 { 0 } else { tail + 1 }
}

/// Bytes FastLZ writes for a match of `extent` (as `match_extent` counts): 3 per full 262, then
/// 2 for a short remainder or 3 for one of 6 or more.
fn match_len(extent: u32) -> u32 {
    let l = extent.wrapping_sub(1);
    3 * (l / 262) + if l % 262 >= 6 { 3 } else { 2 }
}

/// How far the bytes at `from` repeat those at `earlier` (which comes first; the two may
/// overlap), scanning up to `end`: the number of equal bytes plus one when a difference stops
/// the scan (op-geth's `cmp` counts the differing byte too), else `end - from`.
fn match_extent(input: &[u8], earlier: u32, from: u32, end: u32) -> u32 {
    let span = (end - from) as usize;
    let a = &input[earlier as usize..][..span];
    let b = &input[from as usize..][..span];
    let word = |s: &[u8], i: usize| u64::from_le_bytes(s[i..i + 8].try_into().expect("8 bytes"));
    let mut i = 0;
    while i + 8 <= span {
        let differ = word(a, i) ^ word(b, i);
        if differ != 0 {
            // The first differing byte is the lowest non-zero one (little-endian words).
            return (i + differ.trailing_zeros() as usize / 8 + 1) as u32;
        }
        i += 8;
    }
    match (i..span).find(|&j| a[j] != b[j]) {
        Some(j) => (j + 1) as u32,
        None => span as u32,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// op-geth's `FlzCompressLen`, line by line (a fresh table, byte reads, byte compares).
    fn op_geth(ib: &[u8]) -> u32 {
        let mut n = 0u32;
        let mut ht = vec![0u32; 8192];
        let u24 = |i: u32| {
            u32::from(ib[i as usize])
                | (u32::from(ib[i as usize + 1]) << 8)
                | (u32::from(ib[i as usize + 2]) << 16)
        };
        let cmp = |p: u32, q: u32, mut e: u32| {
            let mut l = 0u32;
            e -= q;
            while l < e {
                if ib[(p + l) as usize] != ib[(q + l) as usize] {
                    e = 0;
                }
                l += 1;
            }
            l
        };
        let literals = |n: &mut u32, mut r: u32| {
            *n += 0x21 * (r / 0x20);
            r %= 0x20;
            if r != 0 {
                *n += r + 1;
            }
        };
        let hash = |v: u32| ((v.wrapping_mul(2_654_435_769) >> 19) & 0x1fff) as usize;
        let mut a = 0u32;
        let ip_limit = if ib.len() < 13 {
            0
        } else {
            ib.len() as u32 - 13
        };
        let mut ip = a + 2;
        while ip < ip_limit {
            let mut r;
            loop {
                let s = u24(ip);
                let h = hash(s);
                r = ht[h];
                ht[h] = ip;
                let d = ip.wrapping_sub(r);
                if ip >= ip_limit {
                    break;
                }
                ip += 1;
                if d <= 0x1fff && s == u24(r) {
                    break;
                }
            }
            if ip >= ip_limit {
                break;
            }
            ip -= 1;
            if ip > a {
                literals(&mut n, ip - a);
            }
            let l = cmp(r + 3, ip + 3, ip_limit + 9);
            let m = l.wrapping_sub(1);
            n += 3 * (m / 262) + if m % 262 >= 6 { 3 } else { 2 };
            ht[hash(u24(ip + l))] = ip + l;
            ht[hash(u24(ip + l + 1))] = ip + l + 1;
            ip += l + 2;
            a = ip;
        }
        literals(&mut n, (ib.len() as u32).wrapping_sub(a));
        n
    }

    /// Bytes from a small alphabet, so that runs and repeats (matches) are common.
    fn input(max: usize) -> impl Strategy<Value = Vec<u8>> {
        (1u8..=255, prop::collection::vec(any::<u8>(), 0..max))
            .prop_map(|(alphabet, v)| v.into_iter().map(|b| b % alphabet).collect())
    }

    proptest! {
        #[test]
        fn counts_as_op_geth_does(data in input(3_000)) {
            prop_assert_eq!(flz_compress_len(&data), op_geth(&data));
        }
    }

    /// Repeats far apart (beyond the 8 KiB window), long matches (past 262 bytes) and inputs
    /// of 64 KiB or more, which take the fresh table.
    #[test]
    fn long_inputs_count_as_op_geth_does() {
        let mut x = 0x2545_f491_4f6c_dd1du64;
        let mut byte = |m: u8| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            (x % u64::from(m)) as u8
        };
        let block: Vec<u8> = (0..700).map(|_| byte(255)).collect();
        let mut inputs = vec![[block.as_slice(); 20].concat()];
        for (len, alphabet) in [(9_000, 3), (65_535, 7), (65_536, 255), (70_000, 2)] {
            inputs.push((0..len).map(|_| byte(alphabet)).collect());
        }
        inputs.push(vec![0; 70_000]);
        for i in inputs {
            assert_eq!(flz_compress_len(&i), op_geth(&i), "{} bytes", i.len());
        }
    }

    /// The bases pass 16 bits and the table is cleared (every few hundred compressions of 200
    /// bytes, every one of 40 KiB), between inputs that differ: nothing stale is read.
    #[test]
    fn the_table_is_cleared_cleanly() {
        for (len, runs) in [(200u32, 700), (5_000, 30), (40_000, 6)] {
            let a: Vec<u8> = (0..len).map(|i| (i * 7 % 13) as u8).collect();
            let b: Vec<u8> = (0..len).map(|i| (i * 5 % 11) as u8).collect();
            let (want_a, want_b) = (op_geth(&a), op_geth(&b));
            let (mut clears, mut last) = (0, BASED.with_borrow(|t| t.next));
            for i in 0..runs {
                let (input, want) = if i % 2 == 0 {
                    (&a, want_a)
                } else {
                    (&b, want_b)
                };
                assert_eq!(
                    flz_compress_len(input),
                    want,
                    "{len} bytes, compression {i}"
                );
                let next = BASED.with_borrow(|t| t.next);
                clears += usize::from(next <= last);
                last = next;
            }
            assert!(clears >= 2, "{len} bytes: {clears} clears");
        }
    }

    /// Inputs of many lengths under 64 KiB, as op-geth counts them.
    #[test]
    fn mid_inputs_count_as_op_geth_does() {
        let mut x = 0x9e37_79b9_7f4a_7c15u64;
        let sizes = [
            (1_023, 5u64),
            (1_024, 5),
            (1_025, 255),
            (4_095, 5),
            (4_096, 5),
            (4_097, 255),
            (12_000, 3),
        ];
        for (len, alphabet) in sizes {
            let data: Vec<u8> = (0..len)
                .map(|_| {
                    x ^= x << 13;
                    x ^= x >> 7;
                    x ^= x << 17;
                    (x % alphabet) as u8
                })
                .collect();
            assert_eq!(flz_compress_len(&data), op_geth(&data), "{len} bytes");
        }
    }
}
