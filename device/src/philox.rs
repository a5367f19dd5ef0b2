//! Philox4x32-10 (Salmon et al., SC'11), numbered as cuRAND numbers its streams.
//!
//! `curand_init(seed, subsequence, offset)` maps to key = (seed lo, seed hi) and
//! counter = (block lo, block hi, subsequence lo, subsequence hi), with
//! block = offset / 4; the four words of a block come out in order and offset % 4
//! words of the first block are skipped.

const M0: u32 = 0xD251_1F53;
const M1: u32 = 0xCD9E_8D57;
const W0: u32 = 0x9E37_79B9;
const W1: u32 = 0xBB67_AE85;

#[cfg(not(target_arch = "nvptx64"))]
#[inline(always)]
fn mulhilo(a: u32, b: u32) -> (u32, u32) {
    let p = (a as u64) * (b as u64);
    ((p >> 32) as u32, p as u32)
}

/// The same product as one `mul.wide.u32` split into its halves. Written in Rust, LLVM
/// carries the rounds' words in 64-bit registers (a 64-bit multiply and xor per step),
/// and ptxas then adds a zero high part after every multiply: 20 instructions more
/// per block.
#[cfg(target_arch = "nvptx64")]
#[inline(always)]
fn mulhilo(a: u32, b: u32) -> (u32, u32) {
    let (hi, lo): (u32, u32);
    // SAFETY: arithmetic on registers only: no memory, no stack, no side effect.
    unsafe {
        core::arch::asm!(
            "{{ .reg .b64 t; mul.wide.u32 t, {a}, {b}; mov.b64 {{{l}, {h}}}, t; }}",
            a = in(reg32) a,
            b = in(reg32) b,
            l = out(reg32) lo,
            h = out(reg32) hi,
            options(pure, nomem, nostack),
        );
    }
    (hi, lo)
}

/// The bare Philox4x32 function with 10 rounds: four output words for one counter.
#[inline(always)]
pub fn philox4x32_10(ctr: [u32; 4], key: [u32; 2]) -> [u32; 4] {
    let [mut c0, mut c1, mut c2, mut c3] = ctr;
    let [mut k0, mut k1] = key;
    let mut round = 0;
    while round < 10 {
        let (hi0, lo0) = mulhilo(M0, c0);
        let (hi1, lo1) = mulhilo(M1, c2);
        let n0 = hi1 ^ c1 ^ k0;
        let n2 = hi0 ^ c3 ^ k1;
        c0 = n0;
        c1 = lo1;
        c2 = n2;
        c3 = lo0;
        k0 = k0.wrapping_add(W0);
        k1 = k1.wrapping_add(W1);
        round += 1;
    }
    [c0, c1, c2, c3]
}

/// The key for a 64-bit seed, as cuRAND splits it.
#[inline(always)]
pub fn key_of(seed: u64) -> [u32; 2] {
    [seed as u32, (seed >> 32) as u32]
}

/// Four words of block `block` (a 64-bit block index) of stream `subsequence`.
#[inline(always)]
pub fn block_words(key: [u32; 2], subsequence: u64, block: u64) -> [u32; 4] {
    philox4x32_10(
        [
            block as u32,
            (block >> 32) as u32,
            subsequence as u32,
            (subsequence >> 32) as u32,
        ],
        key,
    )
}

/// `curand_uniform` for one word: a float in (0, 1].
#[inline(always)]
pub fn uniform_f32(w: u32) -> f32 {
    const INV: f32 = 1.0 / 4_294_967_296.0;
    (w as f32) * INV + INV / 2.0
}

/// One word to a double in (0, 1], the same formula in double precision
/// (`w · 2⁻³² + 2⁻³³`, exact).
#[inline(always)]
pub fn uniform_f64(w: u32) -> f64 {
    const INV: f64 = 1.0 / 4_294_967_296.0;
    (w as f64) * INV + INV / 2.0
}

/// One word to a float in [0, 1): its top 24 bits times 2⁻²⁴ (exact; never 1, unlike
/// `w·2⁻³²` rounded to f32).
#[inline(always)]
pub fn uniform_closed_open_f32(w: u32) -> f32 {
    const INV: f32 = 1.0 / 16_777_216.0;
    ((w >> 8) as f32) * INV
}

/// One word to a double in [0, 1): `w · 2⁻³²` (exact).
#[inline(always)]
pub fn uniform_closed_open_f64(w: u32) -> f64 {
    const INV: f64 = 1.0 / 4_294_967_296.0;
    (w as f64) * INV
}

/// A uniform integer in `0..n` from one word (multiply-shift; the bias is below
/// n / 2³², negligible for population sizes).
#[inline(always)]
pub fn below(w: u32, n: u32) -> u32 {
    (((w as u64) * (n as u64)) >> 32) as u32
}

/// A Philox4x32-10 generator positioned like cuRAND's
/// `curand_init(seed, subsequence, offset)`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Philox4x32 {
    key: [u32; 2],
    subsequence: u64,
    block: u64,
    buf: [u32; 4],
    /// Index of the next word of `buf` to hand out; 4 means "refill first".
    next: usize,
}

impl Philox4x32 {
    /// The generator `curand_init(seed, subsequence, offset)` would give.
    pub fn new(seed: u64, subsequence: u64, offset: u64) -> Self {
        let key = key_of(seed);
        let block = offset / 4;
        let skip = (offset % 4) as usize;
        let mut g = Self {
            key,
            subsequence,
            block,
            buf: [0; 4],
            next: 4,
        };
        if skip != 0 {
            g.buf = block_words(key, subsequence, block);
            g.block = block.wrapping_add(1);
            g.next = skip;
        }
        g
    }

    /// The next 32-bit word (`curand`).
    #[inline]
    pub fn next_word(&mut self) -> u32 {
        if self.next == 4 {
            self.buf = block_words(self.key, self.subsequence, self.block);
            self.block = self.block.wrapping_add(1);
            self.next = 0;
        }
        let w = self.buf[self.next];
        self.next += 1;
        w
    }

    /// `curand_uniform`: a float in (0, 1].
    #[inline]
    pub fn uniform(&mut self) -> f32 {
        uniform_f32(self.next_word())
    }

    /// A double in (0, 1] from one word (see [`uniform_f64`]).
    #[inline]
    pub fn uniform_f64(&mut self) -> f64 {
        uniform_f64(self.next_word())
    }
}

#[cfg(not(target_arch = "nvptx64"))]
mod rng_impl {
    use super::Philox4x32;
    use rand_core::{RngCore, SeedableRng, impls};

    impl RngCore for Philox4x32 {
        fn next_u32(&mut self) -> u32 {
            self.next_word()
        }
        fn next_u64(&mut self) -> u64 {
            impls::next_u64_via_u32(self)
        }
        fn fill_bytes(&mut self, dst: &mut [u8]) {
            impls::fill_bytes_via_next(self, dst)
        }
    }

    impl SeedableRng for Philox4x32 {
        /// The 64-bit seed, little endian; subsequence 0, offset 0.
        type Seed = [u8; 8];
        fn from_seed(seed: Self::Seed) -> Self {
            Philox4x32::new(u64::from_le_bytes(seed), 0, 0)
        }
        fn seed_from_u64(state: u64) -> Self {
            Philox4x32::new(state, 0, 0)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_answers_of_the_round_function() {
        assert_eq!(
            philox4x32_10([0; 4], [0; 2]),
            [0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8]
        );
        assert_eq!(
            philox4x32_10([u32::MAX; 4], [u32::MAX; 2]),
            [0x408f276d, 0x41c83b0e, 0xa20bc7c6, 0x6d5451fd]
        );
        assert_eq!(
            philox4x32_10(
                [0x243f6a88, 0x85a308d3, 0x13198a2e, 0x03707344],
                [0xa4093822, 0x299f31d0]
            ),
            [0xd16cfe09, 0x94fdcceb, 0x5001e420, 0x24126ea1]
        );
    }

    #[test]
    // The uniforms are cuRAND's, printed with nine significant digits.
    #[allow(clippy::excessive_precision)]
    fn curand_streams_match() {
        let mut g = Philox4x32::new(0, 0, 0);
        let words: Vec<u32> = (0..8).map(|_| g.next_word()).collect();
        assert_eq!(
            words,
            [
                0x6627e8d5, 0xe169c58d, 0xbc57ac4c, 0x9b00dbd8, 0xf8e4cca4, 0x5cb200db, 0xb1a574eb,
                0x097eff67
            ]
        );
        let mut g = Philox4x32::new(0, 1, 0);
        let words: Vec<u32> = (0..8).map(|_| g.next_word()).collect();
        assert_eq!(
            words,
            [
                0x844515e1, 0xf08d6eaa, 0x0f19c053, 0x83f875f0, 0xca7cf69e, 0xd9c77ded, 0x7e66d954,
                0x6d658f40
            ]
        );
        let mut g = Philox4x32::new(0, 0, 0);
        let u: Vec<f32> = (0..4).map(|_| g.uniform()).collect();
        assert_eq!(u, [0.399046481, 0.880520225, 0.735712767, 0.605481863]);
        let mut g = Philox4x32::new(0, 1, 0);
        let u: Vec<f32> = (0..4).map(|_| g.uniform()).collect();
        assert_eq!(u, [0.516679168, 0.939658105, 0.0589866824, 0.515509963]);
    }

    #[test]
    fn offsets_skip_words_and_blocks() {
        for seed in [0u64, 1, 0xdead_beef_1234_5678] {
            for sub in [0u64, 7, 1 << 40] {
                let mut base = Philox4x32::new(seed, sub, 0);
                let all: Vec<u32> = (0..24).map(|_| base.next_word()).collect();
                for off in 0..16u64 {
                    let mut g = Philox4x32::new(seed, sub, off);
                    let got: Vec<u32> = (0..8).map(|_| g.next_word()).collect();
                    assert_eq!(got[..], all[off as usize..off as usize + 8]);
                }
            }
        }
    }

    #[test]
    fn uniforms_stay_in_the_half_open_interval() {
        for w in [0u32, 1, 2, 0x7fff_ffff, u32::MAX - 127, u32::MAX] {
            let u = uniform_f32(w);
            assert!(u > 0.0 && u <= 1.0, "{w}: {u}");
            let d = uniform_f64(w);
            assert!(d > 0.0 && d < 1.0, "{w}: {d}");
        }
        assert_eq!(uniform_f32(u32::MAX), 1.0);
    }

    #[test]
    fn below_covers_the_range() {
        assert_eq!(below(0, 10), 0);
        assert_eq!(below(u32::MAX, 10), 9);
        assert_eq!(below(u32::MAX / 2, 2), 0);
        assert_eq!(below(u32::MAX / 2 + 1, 2), 1);
    }
}
