#include <gtest/gtest.h>
#include <omp.h>

#include <string>
#include <vector>

#include "core/error.h"
#include "core/rng.h"
#include "kernels/ops.h"
#include "reference/ops_reference.h"
#include "ops_test_support.h"

namespace difftx::kernels {
namespace {

using testing::expect_close;
using testing::random_vector;
using testing::to_double;

// Few distinct ids, so that rows repeat and the backward must add them all.
std::vector<int32_t> random_ids(int64_t rows, int64_t V, Rng& rng) {
  std::vector<int32_t> ids(rows);
  for (auto& id : ids) id = static_cast<int32_t>(rng.below(V));
  return ids;
}

TEST(Embedding, ForwardAndBackwardMatchReference) {
  Rng rng(51);
  const int64_t V = 50;
  for (int64_t rows : {1, 3, 1000})
    for (int64_t n : {1, 7, 64, 65, 130}) {
      const auto table = random_vector(V * n, rng), dy = random_vector(rows * n, rng);
      const auto dtable_start = random_vector(V * n, rng);
      const auto ids = random_ids(rows, V, rng);
      std::vector<float> y(rows * n), dtable = dtable_start;
      embedding_forward(table.data(), ids.data(), y.data(), rows, n, V);
      embedding_backward(ids.data(), dy.data(), dtable.data(), rows, n);

      const auto table_d = to_double(table), dy_d = to_double(dy);
      std::vector<double> y_ref(rows * n);
      auto dtable_ref = to_double(dtable_start);
      reference::embedding_forward(table_d.data(), ids.data(), y_ref.data(), rows, n, V);
      reference::embedding_backward(ids.data(), dy_d.data(), dtable_ref.data(), rows, n);
      const std::string where = "rows=" + std::to_string(rows) + " n=" + std::to_string(n);
      expect_close(y, y_ref, 0, 0, "y " + where);  // a copy: exact
      expect_close(dtable, dtable_ref, 1e-5, 1e-5, "dtable " + where);
    }
}

TEST(Embedding, ReferenceGradientMatchesFiniteDifferences) {
  Rng rng(52);
  const int64_t V = 4, n = 3, rows = 6;
  auto table = to_double(random_vector(V * n, rng));
  const std::vector<int32_t> ids = {2, 0, 2, 3, 2, 0};  // id 1 unused: its gradient stays 0
  const auto w = to_double(random_vector(rows * n, rng));
  std::vector<double> y(rows * n), dtable(V * n, 0.0);
  auto loss = [&] {
    reference::embedding_forward(table.data(), ids.data(), y.data(), rows, n, V);
    return testing::weighted_sum(w, y);
  };
  reference::embedding_backward(ids.data(), w.data(), dtable.data(), rows, n);
  EXPECT_LT(testing::max_abs_diff(dtable, testing::finite_difference(table, loss)), 1e-8);
}

TEST(Embedding, TableGradientDoesNotDependOnThreadCount) {
  Rng rng(53);
  const int64_t V = 7, n = 200, rows = 600;
  const auto dy = random_vector(rows * n, rng);
  const auto ids = random_ids(rows, V, rng);
  const int saved = omp_get_max_threads();
  std::vector<std::vector<float>> by_threads;
  for (int threads : {1, 2, 3}) {
    omp_set_num_threads(threads);
    std::vector<float> dtable(V * n, 0.5f);
    embedding_backward(ids.data(), dy.data(), dtable.data(), rows, n);
    by_threads.push_back(dtable);
  }
  omp_set_num_threads(saved);
  EXPECT_EQ(by_threads[0], by_threads[1]);
  EXPECT_EQ(by_threads[0], by_threads[2]);
}

TEST(Embedding, RejectsIdsOutsideTheVocabularyNamingThePosition) {
  const int64_t V = 5, n = 2;
  std::vector<float> table(V * n), y(4 * n);
  for (int32_t bad : {5, -1}) {
    const std::vector<int32_t> ids = {0, 4, 1, bad};
    try {
      embedding_forward(table.data(), ids.data(), y.data(), 4, n, V);
      ADD_FAILURE() << "id " << bad << " was accepted";
    } catch (const Error& e) {
      EXPECT_NE(std::string(e.what()).find("position 3"), std::string::npos) << e.what();
    }
  }
}

}  // namespace
}  // namespace difftx::kernels
