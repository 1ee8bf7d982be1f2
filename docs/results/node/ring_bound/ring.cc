// Upper bound: binomial bcast of 8 B over SPSC rings, 8 threads, yield when empty.
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>
struct alignas(64) Ring {
  static constexpr int N = 64;
  struct alignas(64) Slot {
    double v;
  };
  alignas(64) std::atomic<unsigned> tail{0};
  alignas(64) std::atomic<unsigned> head{0};
  Slot slots[N];
};
int main(int argc, char** argv) {
  const int p = argc > 1 ? atoi(argv[1]) : 8;
  const int iters = 1000000;
  std::vector<Ring> rings(p * p);
  auto ring = [&](int f, int t) -> Ring& { return rings[f * p + t]; };
  auto t0 = std::chrono::steady_clock::now();
  std::vector<std::thread> th;
  for (int r = 0; r < p; ++r)
    th.emplace_back([&, r] {
      // binomial: parent = r - highest bit; children r + 2^k for 2^k > r
      int parent = -1;
      int hb = 1;
      while (hb <= r) hb <<= 1;
      if (r) parent = r - (hb >> 1);
      std::vector<int> kids;
      for (int m = hb; r + m < p; m <<= 1) kids.push_back(r + m);
      double v = 0;
      for (int i = 0; i < iters; ++i) {
        if (parent >= 0) {
          Ring& in = ring(parent, r);
          unsigned h = in.head.load(std::memory_order_relaxed);
          while (in.tail.load(std::memory_order_acquire) == h) std::this_thread::yield();
          v = in.slots[h % Ring::N].v;
          in.head.store(h + 1, std::memory_order_release);
        } else
          v = i;
        for (int k : kids) {
          Ring& out = ring(r, k);
          unsigned t = out.tail.load(std::memory_order_relaxed);
          while (t - out.head.load(std::memory_order_acquire) >= Ring::N) std::this_thread::yield();
          out.slots[t % Ring::N].v = v;
          out.tail.store(t + 1, std::memory_order_release);
        }
      }
      if (v != iters - 1) std::printf("bad\n");
    });
  for (auto& t : th) t.join();
  std::chrono::duration<double> d = std::chrono::steady_clock::now() - t0;
  std::printf("p=%d: %.3f us per bcast\n", p, d.count() / iters * 1e6);
}
