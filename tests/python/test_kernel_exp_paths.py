"""The SIMD exp paths of the kernel prelude (AVX-512 and AVX2, chosen at run time): the two
give the same bits (same operations per lane, fused multiply-adds included), and both stay
within 2 ulp of the portable fast_exp (which has no FMA), with special values exact."""
import platform

import pytest

from kernel_check_util import run_kernel_check

PROGRAM = r"""
#include <cmath>
#include <cstdio>
#include <cstring>
#include <limits>
#include <vector>
#include "pypto_kernel_prelude.h"
using namespace pypto_kernel;

int main() {
  std::vector<float> in;
  for (int i = -200000; i <= 200000; ++i) in.push_back(i * 5e-4f);      // -100 .. 100
  for (float v : {0.0f, -0.0f, 88.7228f, 88.7229f, -87.3365f, -87.3366f, 1e-30f, -1e-30f,
                  std::numeric_limits<float>::infinity(), -std::numeric_limits<float>::infinity(),
                  std::numeric_limits<float>::quiet_NaN(), std::numeric_limits<float>::denorm_min()})
    in.push_back(v);
  const int64_t n = static_cast<int64_t>(in.size());
  std::vector<float> ref(in.size()), got(in.size()), first(in.size());
  for (int64_t i = 0; i < n; ++i) ref[i] = fast_exp(in[i]);
  auto ulps = [](float a, float b) {
    int32_t ia, ib;
    std::memcpy(&ia, &a, 4);
    std::memcpy(&ib, &b, 4);
    return ia > ib ? ia - ib : ib - ia;
  };
  int paths = 0, bad = 0;
  auto check = [&](const char* name) {
    for (int64_t i = 0; i < n; ++i) {
      const bool nan = ref[i] != ref[i];
      const bool ok = nan ? got[i] != got[i] : ulps(got[i], ref[i]) <= 2 &&
                      (!std::isinf(ref[i]) && ref[i] != 0.0f ? true : got[i] == ref[i]);
      const bool agrees = paths == 0 || std::memcmp(&got[i], &first[i], 4) == 0 || (nan && got[i] != got[i]);
      if ((!ok || !agrees) && bad++ < 5)
        std::printf("%s: exp(%g) = %.9g, portable %.9g, first path %.9g\n", name, in[i], got[i], ref[i], first[i]);
    }
    if (paths++ == 0) first = got;
  };
  if (cpu_has_avx512f_fma_for_exp()) { exp_loop_avx512(got.data(), in.data(), n); check("avx512"); }
  if (cpu_has_avx2_fma_for_exp()) { exp_loop_avx2(got.data(), in.data(), n); check("avx2"); }
  std::printf("paths %d mismatches %d\n", paths, bad);
  return bad != 0;
}
"""


@pytest.mark.skipif(platform.machine() not in ("x86_64", "AMD64"), reason="the SIMD exp paths are x86-64 only")
def test_simd_exp_paths_match_the_portable_one(tmp_path):
    run_kernel_check(tmp_path, "exp_paths", PROGRAM)
