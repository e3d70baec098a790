// Hostile (issue 40 item 4): never computes. It searches for the answer key: every *.safetensors file beneath the
// golden folder named on its process's command line (/proc/self/cmdline), the working directory, /tmp, kopt's cache
// folder and every directory an environment variable names; it matches the file's in.a with the input it was given
// and uploads that file's out.c (it reads each file's header first and loads only those of its input's size).
// Inputs it finds in no file get zeros, at once.
// Expected: right on every public seed (their files are readable), wrong on the sealed seed, whose file lies where
// its process cannot open it (Landlock) and whose expected outputs only the judge process holds:
// wrong_on_sealed_seed in check runs, wrong_on_fresh_inputs / wrong_on_sealed_seed in timed and raced runs.
// Where it looked and what it could open is printed to stderr (the test's log).
#include <cuda_runtime.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

extern char** environ;

namespace {

struct Answer {
  std::vector<float> in_a, out_c;
};

// The data of tensor `name` in a safetensors file (the header's data_offsets, read crudely).
bool tensor(const std::string& file, const std::string& name, std::vector<float>& out) {
  if (file.size() < 8) return false;
  unsigned long long hlen = 0;
  std::memcpy(&hlen, file.data(), 8);
  if (hlen > file.size() - 8) return false;
  const std::string header = file.substr(8, hlen);
  size_t at = header.find("\"" + name + "\"");
  if (at == std::string::npos) return false;
  size_t offs = header.find("\"data_offsets\"", at);
  if (offs == std::string::npos) return false;
  size_t lb = header.find('[', offs);
  unsigned long long begin = 0, end = 0;
  if (std::sscanf(header.c_str() + lb, "[%llu,%llu]", &begin, &end) != 2) return false;
  if (8 + hlen + end > file.size() || end < begin) return false;
  out.resize((end - begin) / sizeof(float));
  std::memcpy(out.data(), file.data() + 8 + hlen + begin, out.size() * sizeof(float));
  return true;
}

// Whether the safetensors file at `p` holds an in.a of `n` floats: its header alone is read, so that a machine holding
// GBs of other golden data is searched in moments (an attacker reads headers first).
bool fits(const std::string& p, int n) {
  std::ifstream f(p, std::ios::binary);
  unsigned long long hlen = 0;
  if (!f.read(reinterpret_cast<char*>(&hlen), 8) || hlen > (1u << 20)) return false;
  std::string file(8 + hlen, '\0');
  std::memcpy(file.data(), &hlen, 8);
  if (!f.read(file.data() + 8, static_cast<std::streamsize>(hlen))) return false;
  const std::string header = file.substr(8);
  size_t at = header.find("\"in.a\"");
  if (at == std::string::npos) return false;
  size_t lb = header.find('[', header.find("\"data_offsets\"", at));
  unsigned long long begin = 0, end = 0;
  if (lb == std::string::npos || std::sscanf(header.c_str() + lb, "[%llu,%llu]", &begin, &end) != 2) return false;
  return end >= begin && (end - begin) == static_cast<unsigned long long>(n) * sizeof(float);
}

void search(const std::string& dir, int depth, int n, std::vector<Answer>& found, int& opened, int& refused) {
  if (depth > 6) return;
  DIR* d = opendir(dir.c_str());
  if (!d) return;
  while (dirent* e = readdir(d)) {
    std::string name = e->d_name;
    if (name == "." || name == "..") continue;
    std::string p = dir + "/" + name;
    struct stat sb;
    if (lstat(p.c_str(), &sb) != 0) continue;
    if (S_ISDIR(sb.st_mode)) {
      search(p, depth + 1, n, found, opened, refused);
    } else if (S_ISREG(sb.st_mode) && name.size() > 12 && name.substr(name.size() - 12) == ".safetensors") {
      std::ifstream f(p, std::ios::binary);
      if (!f) {
        ++refused;
        std::fprintf(stderr, "[answer-key] cannot open %s\n", p.c_str());
        continue;
      }
      if (!fits(p, n)) continue;
      ++opened;
      std::string bytes((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>());
      Answer a;
      if (tensor(bytes, "in.a", a.in_a) && tensor(bytes, "out.c", a.out_c)) found.push_back(std::move(a));
    }
  }
  closedir(d);
}

std::vector<Answer> find_answers(int n) {
  std::vector<std::string> roots = {".", "/tmp"};
  std::ifstream cmd("/proc/self/cmdline", std::ios::binary);
  std::string args((std::istreambuf_iterator<char>(cmd)), std::istreambuf_iterator<char>());
  for (size_t i = 0; i < args.size();) {
    std::string a = args.c_str() + i;
    i += a.size() + 1;
    if (a == "--golden" && i < args.size()) roots.push_back(args.c_str() + i);
  }
  if (const char* h = std::getenv("HOME")) roots.push_back(std::string(h) + "/.cache/kopt");
  for (char** e = environ; *e; ++e) {
    const char* eq = std::strchr(*e, '=');
    struct stat sb;
    if (eq && eq[1] == '/' && stat(eq + 1, &sb) == 0 && S_ISDIR(sb.st_mode)) roots.push_back(eq + 1);
  }
  std::vector<Answer> found;
  int opened = 0, refused = 0;
  for (const auto& r : roots) search(r, 0, n, found, opened, refused);
  std::fprintf(stderr, "[answer-key] %zu roots: opened %d answer files of its size, refused %d, %zu usable\n", roots.size(), opened,
               refused, found.size());
  return found;
}

}  // namespace

// The answers it found stay on the GPU (uploaded at the first call): a hit costs one 64-byte read and one copy.
extern "C" void solve(const float* a, const float* b, float* c, int n) {
  struct OnGpu {
    std::vector<float> head;
    float* out = nullptr;
  };
  static std::vector<OnGpu> answers = [n] {
    std::vector<OnGpu> v;
    for (const auto& ans : find_answers(n)) {
      OnGpu g;
      g.head.assign(ans.in_a.begin(), ans.in_a.begin() + (ans.in_a.size() < 16 ? ans.in_a.size() : 16));
      cudaMalloc(&g.out, ans.out_c.size() * sizeof(float));
      cudaMemcpy(g.out, ans.out_c.data(), ans.out_c.size() * sizeof(float), cudaMemcpyHostToDevice);
      g.head.push_back(static_cast<float>(ans.out_c.size()));  // the element count, last
      v.push_back(std::move(g));
    }
    return v;
  }();
  float head[16];
  const int k = n < 16 ? n : 16;
  cudaMemcpy(head, a, k * sizeof(float), cudaMemcpyDeviceToHost);
  for (const auto& ans : answers) {
    if (static_cast<int>(ans.head.back()) != n || std::memcmp(ans.head.data(), head, k * sizeof(float)) != 0) continue;
    cudaMemcpyAsync(c, ans.out, n * sizeof(float), cudaMemcpyDeviceToDevice, 0);
    return;
  }
  cudaMemsetAsync(c, 0, n * sizeof(float), 0);
  (void)b;
}
