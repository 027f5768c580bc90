//! Layer-sized tables in memory, on huge pages where the system allows it.
//!
//! The in-memory pass touches its cells and the lower layers' values at random: each
//! compare-and-swap or lookup lands on another page. With 4 KiB pages a layer of 400 MB
//! spans 100,000 of them, far beyond what the TLB holds, so nearly every access also walks
//! the page tables. Transparent huge pages (2 MiB) cut that walk: on this project's machine
//! layer 24 alone took 123.2–129.3 s with them against 147.3–162.0 s without. Linux
//! gives them only to memory that asks (`madvise` mode, the common default), so the tables
//! ask before their first write. Elsewhere, or when the kernel refuses, they are ordinary
//! memory: the advice changes speed, never contents.

/// A vector of `len` elements made by `fill`, its memory advised onto huge pages before
/// `fill` first writes it.
pub(crate) fn huge_vec<T>(len: usize, fill: impl FnMut() -> T) -> Vec<T> {
    let mut v = Vec::with_capacity(len);
    advise_huge(v.spare_capacity_mut());
    v.resize_with(len, fill);
    v
}

/// Below this, a table is not worth a system call: it would not fill a huge page.
const HUGE_PAGE: usize = 2 << 20;

#[cfg(target_os = "linux")]
fn advise_huge<T>(spare: &mut [std::mem::MaybeUninit<T>]) {
    const PAGE: usize = 4096;
    let bytes = std::mem::size_of_val(spare);
    if bytes < HUGE_PAGE {
        return;
    }
    // madvise wants a page-aligned start; the kernel then uses huge pages for the 2 MiB
    // aligned parts of the range.
    let start = spare.as_mut_ptr() as usize;
    let aligned = start.next_multiple_of(PAGE);
    let len = (start + bytes - aligned) / PAGE * PAGE;
    // SAFETY: the range lies inside `spare`, memory this vector owns and nothing else
    // references; MADV_HUGEPAGE changes how the kernel backs it, not its contents or its
    // mapping. An error (a kernel without transparent huge pages) leaves it as it was, which
    // is correct too, so it is ignored.
    unsafe {
        libc::madvise(aligned as *mut libc::c_void, len, libc::MADV_HUGEPAGE);
    }
}

#[cfg(not(target_os = "linux"))]
fn advise_huge<T>(_spare: &mut [std::mem::MaybeUninit<T>]) {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_huge_vector_holds_what_it_was_filled_with() {
        // Large enough to be advised, small and odd-sized enough to test the edges.
        let len = HUGE_PAGE * 3 + 12_345;
        let mut k = 0u32;
        let v = huge_vec(len, || {
            k += 1;
            k as u8
        });
        assert_eq!(v.len(), len);
        assert!(v.iter().enumerate().all(|(i, &b)| b == (i + 1) as u8));
        let small = huge_vec(10, || 7i8);
        assert_eq!(small, vec![7i8; 10]);
    }
}
