// Where IR nodes and types live: make_node<T>(args...) is std::make_shared<T>(args...) with the
// object and its reference counts taken from a pool of blocks of one size, per thread. Nodes
// made one after another then sit one after another in memory, so a pass that walks a long
// body in order streams through it; from the general heap they lay scattered among every other
// allocation (strings, vectors, the passes' maps), a cache miss apiece: on a 100,000-call
// orchestration the passes ran 1.5-2x slower than with a size-class allocator.
//
//   ExprPtr v = make_node<Var>("x", ScalarType::make(DataType::INDEX), span);
//
// A freed block goes to the freeing thread's list of its size and is reused for the next node of
// that size. A list past 256 KB, and the lists of a thread that ends, go to a shared list that
// the next thread to run dry takes, so a thread freeing what another made does not hoard blocks
// while the other takes new memory. Memory is never given back to the system. Under
// AddressSanitizer nodes come from the general heap, so that a use after free is still reported.
#pragma once
#include <cstddef>
#include <memory>
#include <new>
#include <utility>

namespace pypto::ir {

namespace pool {
// Blocks are multiples of kGranule bytes up to kMaxBlock; larger objects use operator new.
constexpr size_t kGranule = 16;
constexpr size_t kMaxBlock = 512;
constexpr size_t kClasses = kMaxBlock / kGranule;
constexpr size_t class_of(size_t bytes) { return (bytes + kGranule - 1) / kGranule - 1; }
void* allocate(size_t cls);
void deallocate(void* p, size_t cls) noexcept;
// Bytes the pools have taken from the system so far (they never give any back): a program
// built and freed again and again reuses its blocks, so this stops growing.
long long reserved_bytes();

// The allocator std::allocate_shared rebinds to its control block (object + counts).
template <class T>
struct Allocator {
  using value_type = T;
  Allocator() = default;
  template <class U>
  Allocator(const Allocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (n == 1 && sizeof(T) <= kMaxBlock && alignof(T) <= kGranule) return static_cast<T*>(pool::allocate(class_of(sizeof(T))));
    return static_cast<T*>(::operator new(n * sizeof(T)));
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n == 1 && sizeof(T) <= kMaxBlock && alignof(T) <= kGranule) return pool::deallocate(p, class_of(sizeof(T)));
    ::operator delete(p);
  }
  template <class U>
  bool operator==(const Allocator<U>&) const noexcept { return true; }
  template <class U>
  bool operator!=(const Allocator<U>&) const noexcept { return false; }
};
}  // namespace pool

#if defined(__SANITIZE_ADDRESS__)
#define PYPTO_NODE_POOL 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define PYPTO_NODE_POOL 0
#endif
#endif
#ifndef PYPTO_NODE_POOL
#define PYPTO_NODE_POOL 1
#endif

template <class T, class... Args>
std::shared_ptr<T> make_node(Args&&... args) {
#if PYPTO_NODE_POOL
  return std::allocate_shared<T>(pool::Allocator<T>{}, std::forward<Args>(args)...);
#else
  return std::make_shared<T>(std::forward<Args>(args)...);
#endif
}

}  // namespace pypto::ir
