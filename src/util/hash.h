#pragma once
#include <string>
#include <string_view>

namespace kopt::util {

// Content hash (XXH3-128) as 32 hex characters. Not cryptographic: used for cache keys and identities.
std::string content_hash(std::string_view data);

class Hasher {
 public:
  Hasher();
  ~Hasher();
  Hasher(const Hasher&) = delete;
  Hasher& operator=(const Hasher&) = delete;
  // Each field is length-prefixed so ("ab","c") and ("a","bc") differ.
  Hasher& add(std::string_view field);
  std::string hex() const;

 private:
  void* state_;
};

}  // namespace kopt::util
