//! A precision's lane operations ([`LaneReal`]: 16-byte-chunk loads, shuffles) and the
//! thread group of `g` lanes that serves one individual ([`Group`]).

use super::*;

/// The lane-level operations a precision needs: 16-byte-chunk loads and shuffles.
pub trait LaneReal: Real {
    fn to_words(self) -> [u32; 2];
    fn from_words(w: [u32; 2]) -> Self;
    /// Loads four values from a 16-byte-aligned (f32) or 32-byte-aligned (f64) address.
    ///
    /// # Safety
    /// `p .. p + 4` must be readable and aligned as said.
    unsafe fn load4(p: *const Self) -> [Self; 4];
    /// # Safety
    /// `p .. p + 4` must be writable and aligned as in `load4`.
    unsafe fn store4(p: *mut Self, v: [Self; 4]);
    const WORDS: u32;
}

#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub(crate) struct V4f([f32; 4]);
#[repr(C, align(16))]
#[derive(Clone, Copy)]
pub(crate) struct V2d([f64; 2]);

impl LaneReal for f32 {
    const WORDS: u32 = 1;
    #[inline(always)]
    fn to_words(self) -> [u32; 2] {
        [self.to_bits(), 0]
    }
    #[inline(always)]
    fn from_words(w: [u32; 2]) -> Self {
        f32::from_bits(w[0])
    }
    #[inline(always)]
    unsafe fn load4(p: *const Self) -> [Self; 4] {
        // SAFETY: the caller guarantees four readable, 16-byte-aligned values.
        unsafe { (*(p as *const V4f)).0 }
    }
    #[inline(always)]
    unsafe fn store4(p: *mut Self, v: [Self; 4]) {
        // SAFETY: the caller guarantees four writable, 16-byte-aligned values.
        unsafe { *(p as *mut V4f) = V4f(v) }
    }
}

impl LaneReal for f64 {
    const WORDS: u32 = 2;
    #[inline(always)]
    fn to_words(self) -> [u32; 2] {
        let b = self.to_bits();
        [b as u32, (b >> 32) as u32]
    }
    #[inline(always)]
    fn from_words(w: [u32; 2]) -> Self {
        f64::from_bits(w[0] as u64 | ((w[1] as u64) << 32))
    }
    #[inline(always)]
    unsafe fn load4(p: *const Self) -> [Self; 4] {
        // SAFETY: the caller guarantees four readable values, 32-byte aligned.
        unsafe {
            let a = (*(p as *const V2d)).0;
            let b = (*(p.add(2) as *const V2d)).0;
            [a[0], a[1], b[0], b[1]]
        }
    }
    #[inline(always)]
    unsafe fn store4(p: *mut Self, v: [Self; 4]) {
        // SAFETY: the caller guarantees four writable values, 32-byte aligned.
        unsafe {
            *(p as *mut V2d) = V2d([v[0], v[1]]);
            *(p.add(2) as *mut V2d) = V2d([v[2], v[3]]);
        }
    }
}

/// A group of `g` lanes inside a warp.
#[derive(Clone, Copy)]
pub(crate) struct Group {
    pub(crate) g: u32,
    /// Lane inside the group.
    pub(crate) lane: u32,
    /// `c` operand of shfl for a segment of width g.
    c_seg: u32,
    c_up: u32,
}

impl Group {
    #[inline(always)]
    pub(crate) fn new(g: u32, lane_in_warp: u32) -> Self {
        Group {
            g,
            lane: lane_in_warp & (g - 1),
            c_seg: ((32 - g) << 8) | 0x1f,
            c_up: (32 - g) << 8,
        }
    }
    /// The `c` operand of a butterfly inside the group: the whole warp as one segment.
    /// Groups are aligned and `m < g`, so `lane ^ m` never leaves the lane's group and
    /// the group's own segment (`c_seg`) would pick the same lane; a constant lets
    /// ptxas encode it in the instruction instead of copying it into a register for
    /// every shuffle.
    pub(crate) const C_WARP: u32 = 0x1f;
    #[inline(always)]
    pub(crate) fn xor<T: LaneReal>(&self, v: T, m: u32) -> T {
        let w = v.to_words();
        let a = shfl_bfly(w[0], m, Self::C_WARP);
        let b = if T::WORDS == 2 {
            shfl_bfly(w[1], m, Self::C_WARP)
        } else {
            0
        };
        T::from_words([a, b])
    }
    #[inline(always)]
    pub(crate) fn up<T: LaneReal>(&self, v: T, d: u32) -> T {
        let w = v.to_words();
        let a = shfl_up(w[0], d, self.c_up);
        let b = if T::WORDS == 2 {
            shfl_up(w[1], d, self.c_up)
        } else {
            0
        };
        T::from_words([a, b])
    }
    #[inline(always)]
    pub(crate) fn idx<T: LaneReal>(&self, v: T, s: u32) -> T {
        let w = v.to_words();
        let a = shfl_idx(w[0], s, self.c_seg);
        let b = if T::WORDS == 2 {
            shfl_idx(w[1], s, self.c_seg)
        } else {
            0
        };
        T::from_words([a, b])
    }
    #[inline(always)]
    pub(crate) fn idx_u32(&self, v: u32, s: u32) -> u32 {
        shfl_idx(v, s, self.c_seg)
    }
    #[inline(always)]
    pub(crate) fn min_u32(&self, mut v: u32) -> u32 {
        self.levels(false, |m| {
            let o = shfl_bfly(v, m, Self::C_WARP);
            if o < v {
                v = o;
            }
        });
        v
    }
    /// Calls `f` with the butterfly distances g/2, …, 2, 1 in that order, written out
    /// with constant distances: the kernels' loops over them stayed loops, each level
    /// paying the counter and the branch. The levels beyond the group are skipped,
    /// uniformly over the warp; with `straight` (see [`Real::STRAIGHT`]), a full warp's
    /// five levels run without branches.
    #[inline(always)]
    pub(crate) fn levels(&self, straight: bool, mut f: impl FnMut(u32)) {
        const _: () = assert!(MAX_GROUP == 32);
        if straight && self.g == MAX_GROUP {
            // The whole warp, straight through: after the warp's barrier ptxas knows the
            // lanes converged and drops its divergence test before every shuffle.
            // SAFETY: every lane of the warp reaches the levels together (the callers'
            // loops have warp-uniform trip counts, and g is the same for the warp), as
            // the shuffles' full mask promises too.
            unsafe { asm!("bar.warp.sync 0xffffffff;") }
            f(16);
            f(8);
            f(4);
            f(2);
            f(1);
            return;
        }
        if self.g > 16 {
            f(16);
        }
        if self.g > 8 {
            f(8);
        }
        if self.g > 4 {
            f(4);
        }
        if self.g > 2 {
            f(2);
        }
        if self.g > 1 {
            f(1);
        }
    }
    /// The group's combined sums (every lane gets the same bits).
    #[inline(always)]
    pub(crate) fn combine<T: LaneReal, O: LaneObjective<T>>(
        &self,
        mut acc: Acc<T>,
        obj: &O,
    ) -> Acc<T> {
        self.levels(T::STRAIGHT, |m| {
            let o = Acc {
                a: self.xor(acc.a, m),
                b: if obj.uses_b() {
                    self.xor(acc.b, m)
                } else {
                    acc.b
                },
            };
            acc = obj.combine(acc, o);
        });
        acc
    }

    /// Exclusive prefix sum of `x` over the group, in the CPU twin's order.
    #[inline(always)]
    pub(crate) fn scan_exclusive<T: LaneReal>(&self, x: T) -> (T, T) {
        let mut incl = x;
        let mut d = 1;
        while d < self.g {
            let y = self.up(incl, d);
            if self.lane >= d {
                incl = y + incl;
            }
            d *= 2;
        }
        let e = self.up(incl, 1);
        let excl = if self.lane == 0 { T::ZERO } else { e };
        let total = self.idx(incl, self.g - 1);
        (excl, total)
    }
}
