// ByteBuffer: the bytes a trace writer is building, grown geometrically, with appends that
// compile inline. The writers append a few bytes at a time (a tag, a varint, a comma), tens of
// times per event; std::string's appends are calls into the library (its members are
// instantiated there), each with its own capacity checks, and a profile of a 10M-event
// conversion spent a fifth of its time in them.
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <string_view>
#include <utility>

namespace xtrace {

class ByteBuffer {
 public:
  ByteBuffer() = default;
  ByteBuffer(ByteBuffer&&) noexcept = default;
  ByteBuffer& operator=(ByteBuffer&&) noexcept = default;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  const char* data() const { return data_.get(); }
  char* data() { return data_.get(); }
  char& operator[](size_t i) { return data_[i]; }
  char operator[](size_t i) const { return data_[i]; }
  std::string_view view() const { return {data_.get(), size_}; }
  operator std::string_view() const { return view(); }  // NOLINT: used as bytes everywhere

  void clear() { size_ = 0; }
  void reserve(size_t capacity) {
    if (capacity > capacity_) Regrow(capacity);
  }
  void swap(ByteBuffer& other) noexcept {
    std::swap(data_, other.data_);
    std::swap(size_, other.size_);
    std::swap(capacity_, other.capacity_);
  }

  void push_back(char c) {
    if (size_ == capacity_) Regrow(size_ + 1);
    data_[size_++] = c;
  }
  void append(const char* bytes, size_t n) {
    if (capacity_ - size_ < n) Regrow(size_ + n);
    std::memcpy(data_.get() + size_, bytes, n);
    size_ += n;
  }
  void append(const char* first, const char* last) { append(first, static_cast<size_t>(last - first)); }
  void append(std::string_view bytes) { append(bytes.data(), bytes.size()); }

  // Room for `n` more bytes at the end, to write in place and then Commit (at most n).
  char* Room(size_t n) {
    if (capacity_ - size_ < n) Regrow(size_ + n);
    return data_.get() + size_;
  }
  void Commit(char* end) { size_ = static_cast<size_t>(end - data_.get()); }

  // `n` copies of `c` at `pos`, moving what follows.
  void insert(size_t pos, size_t n, char c) {
    Room(n);
    std::memmove(data_.get() + pos + n, data_.get() + pos, size_ - pos);
    std::memset(data_.get() + pos, c, n);
    size_ += n;
  }

 private:
  // Out of line: the rare path.
  __attribute__((noinline)) void Regrow(size_t need) {
    const size_t capacity = std::max({need, capacity_ * 2, size_t{256}});
    auto grown = std::make_unique_for_overwrite<char[]>(capacity);
    if (size_ > 0) std::memcpy(grown.get(), data_.get(), size_);
    data_ = std::move(grown);
    capacity_ = capacity;
  }

  std::unique_ptr<char[]> data_;
  size_t size_ = 0;
  size_t capacity_ = 0;
};

}  // namespace xtrace
