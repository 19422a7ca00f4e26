// Large allocations on transparent huge pages, for the programs that link this file (the mfu
// binary and the benchmarks; not the library, which must not replace a program's operator new).
//
// Why: mfu's large inputs make a few large arrays (the record columns, the analysis' per-record
// vectors). On a virtual machine every first touch of a 4 KiB page is a fault through the
// hypervisor: on the 2-core CI machine they were 18% of the CPU samples of `mfu analyze` on a
// 1 GiB native log (perf; tests/bench/compare.sh). Debian's kernels leave transparent huge pages
// to madvise(), so a 2 MiB-aligned stretch of an allocation is advised here and faults once per
// 2 MiB instead of 512 times. Measured in the same run (1 GiB inputs, 2 cores):
// glibc.malloc.hugetlb=1, which advises the same way, took native 5.35 -> 3.86 s, Megatron
// 3.24 -> 2.05 s, Kineto 2.75 -> 1.82 s, at the same peak RSS.
//
// Only allocations of kAdviseFrom bytes or more are advised (a judgement: below that the
// aligned interior is at most a page or two, and small blocks are reused by malloc anyway).
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
#include <sys/mman.h>

#include <cstdint>
#include <cstdlib>
#include <new>

namespace {

constexpr std::size_t kHugePage = std::size_t{2} << 20;
constexpr std::size_t kAdviseFrom = std::size_t{4} << 20;

void advise_huge_pages(void* p, std::size_t n) {
  if (n < kAdviseFrom) return;
  const auto begin = reinterpret_cast<std::uintptr_t>(p);
  const std::uintptr_t first = (begin + kHugePage - 1) & ~(kHugePage - 1);
  const std::uintptr_t last = (begin + n) & ~(kHugePage - 1);
  // Advice only: a kernel without transparent huge pages says no and nothing changes.
  if (last > first) (void)::madvise(reinterpret_cast<void*>(first), last - first, MADV_HUGEPAGE);
}

void* allocate(std::size_t n) noexcept {
  void* p = std::malloc(n == 0 ? 1 : n);
  if (p != nullptr) advise_huge_pages(p, n);
  return p;
}

void* allocate_or_throw(std::size_t n) {
  for (;;) {
    if (void* p = allocate(n)) return p;
    std::new_handler h = std::get_new_handler();
    if (h == nullptr) throw std::bad_alloc();
    h();
  }
}

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
#endif
