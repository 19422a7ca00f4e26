// Large allocations on transparent huge pages, for the programs that link this file (the mfu
// binary; not the library, which must not replace a program's operator new).
//
// Why: mfu's large inputs make a few large arrays (the record store's chunks, the analysis'
// per-record vectors). On a virtual machine every first touch of a 4 KiB page is a fault through
// the hypervisor: on the 2-core CI machine they were 18% of the CPU samples of `mfu analyze` on
// a 1 GiB native log (perf; tests/bench/compare.sh), 115,000 faults. Debian's kernels leave
// transparent huge pages to madvise(), so large blocks are advised here and fault once per 2 MiB
// instead of 512 times (8,600 faults left on the same file).
//
// - A block of whole huge pages (the record store's 2 MiB chunks, vectors grown by doubling)
//   starts on a huge-page boundary, so that all of it is advised.
// - Other blocks of two huge pages or more keep malloc's placement and have their aligned
//   interior advised; none is rounded up (a block reserved larger than it is filled would make
//   whole 2 MiB pages resident).
// - malloc maps every block from 2 MiB up on its own (a fixed mmap threshold instead of glibc's
//   sliding one), so that a freed block goes back to the system at once instead of staying in
//   a heap arena: with the sliding threshold, the aligned blocks of the parsing threads' arenas
//   left the Megatron file's peak RSS at 280 MB; with it, 231 MB (against 256 MB before).
//
// Measured side by side on 1 GiB inputs, 2 cores (analyze, before -> after, with the analysis
// changes of the same commit series): native 5.4 -> 3.2 s, Megatron 2.9 -> 1.7 s, Kineto
// 2.75 -> 1.8 s.
//
// Sanitizer builds keep their own operator new.
#if defined(__SANITIZE_ADDRESS__)
#define MFU_NO_LARGE_PAGES 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(memory_sanitizer) || \
    __has_feature(thread_sanitizer)
#define MFU_NO_LARGE_PAGES 1
#endif
#endif

#ifndef MFU_NO_LARGE_PAGES
#include <malloc.h>
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

// The transparent huge page of x86-64 and of arm64 with 4 KiB pages (Linux,
// Documentation/admin-guide/mm/transhuge.rst; /sys/kernel/mm/transparent_hugepage/
// hpage_pmd_size reads 2097152 on the machine measured here). Elsewhere the advice only misses.
constexpr std::size_t kHugePage = std::size_t{2} << 20;

/// Advises the whole huge pages inside [p, p + n).
void advise_huge_pages(void* p, std::size_t n) {
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t last = (begin + n) & ~(kHugePage - 1);
  // Advice only: a kernel without transparent huge pages says no and nothing changes.
  if (last > first) (void)::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

void* allocate(std::size_t n, std::size_t alignment = alignof(std::max_align_t)) noexcept {
  void* p = nullptr;
  if (n >= kHugePage && n % kHugePage == 0 && alignment <= kHugePage) {
    if (::posix_memalign(&p, kHugePage, n) != 0) return nullptr;
    advise_huge_pages(p, n);
    return p;
  }
  if (alignment <= alignof(std::max_align_t)) {
    p = std::malloc(n == 0 ? 1 : n);
  } else if (::posix_memalign(&p, alignment, n == 0 ? 1 : n) != 0) {
    return nullptr;
  }
  if (p != nullptr && n >= 2 * kHugePage) advise_huge_pages(p, n);
  return p;
}

void* allocate_or_throw(std::size_t n, std::size_t alignment = alignof(std::max_align_t)) {
  for (;;) {
    if (void* p = allocate(n, alignment)) return p;
    std::new_handler h = std::get_new_handler();
    if (h == nullptr) throw std::bad_alloc();
    h();
  }
}

// Smaller blocks are kept by malloc when freed (a trim threshold of 1 GiB instead of 128 KiB):
// each trim gave pages back (brk down, or madvise(MADV_DONTNEED) in a thread's arena) and the
// next allocation faulted them in again, zeroed. Measured on the 1 GiB inputs (2-core VM,
// 2026-12-06): page faults 7,075 -> 5,980 (native) and 7,040 -> 6,310 (Megatron), brk calls
// 44 -> 16, system time lower in most paired runs (0.20-0.33 -> 0.07-0.15 s in one round, no
// difference in another: this VM's noise), peak RSS +2 MB.
struct MallocPolicy {
  MallocPolicy() {
    (void)::mallopt(M_MMAP_THRESHOLD, static_cast<int>(kHugePage));
    (void)::mallopt(M_TRIM_THRESHOLD, 1 << 30);
  }
};
const MallocPolicy kMallocPolicy;

}  // namespace

void* operator new(std::size_t n) {
  return allocate_or_throw(n);
}
void* operator new[](std::size_t n) {
  return allocate_or_throw(n);
}
void* operator new(std::size_t n, const std::nothrow_t&) noexcept {
  return allocate(n);
}
void* operator new[](std::size_t n, const std::nothrow_t&) noexcept {
  return allocate(n);
}
void* operator new(std::size_t n, std::align_val_t a) {
  return allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a) {
  return allocate_or_throw(n, static_cast<std::size_t>(a));
}
void* operator new(std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void* operator new[](std::size_t n, std::align_val_t a, const std::nothrow_t&) noexcept {
  return allocate(n, static_cast<std::size_t>(a));
}
void operator delete(void* p) noexcept {
  std::free(p);
}
void operator delete[](void* p) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t) noexcept {
  std::free(p);
}
void operator delete(void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::size_t, std::align_val_t) noexcept {
  std::free(p);
}
void operator delete(void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}
void operator delete[](void* p, std::align_val_t, const std::nothrow_t&) noexcept {
  std::free(p);
}
#endif
