// Trains a 64-128-10 MLP on the UCI handwritten digits (data/digits.csv.gz:
// 1,797 8x8 images with values 0..16, 64 pixel columns then the label) with
// ember's C++ frontend: nn::Sequential, optim::Adam, cross_entropy.
//
//   digits_mlp [path/to/digits.csv.gz]
//
// Exits non-zero if the final test accuracy is below 95% (tools/test.sh
// relies on that).
#include <zlib.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include <ember/ember.h>

#ifndef EMBER_DIGITS_CSV
#define EMBER_DIGITS_CSV "data/digits.csv.gz"
#endif

namespace {

constexpr int kPixels = 64, kClasses = 10;

struct Dataset {
  ember::Tensor x;  // [N, 64] float32 in [0, 1]
  ember::Tensor y;  // [N] int64
};

// Reads the gzip'd CSV; any malformed line is an error naming path and line.
Dataset read_digits(const std::string& path) {
  gzFile f = gzopen(path.c_str(), "rb");
  if (!f) throw std::runtime_error("cannot open " + path + " (pass the digits.csv.gz path as the first argument)");
  std::string text;
  char buf[1 << 16];
  int n;
  while ((n = gzread(f, buf, sizeof buf)) > 0) text.append(buf, n);
  int err = 0;
  const char* msg = gzerror(f, &err);
  // A truncated gzip stream reads as a short file; zlib flags it as Z_BUF_ERROR.
  const bool failed = n < 0 || (err != Z_OK && err != Z_STREAM_END);
  const std::string why = failed ? msg : "";
  gzclose(f);
  if (failed) throw std::runtime_error(path + ": cannot decompress (truncated or corrupt?): " + why);

  std::vector<float> pixels;
  std::vector<int64_t> labels;
  std::istringstream lines(text);
  std::string line;
  int lineno = 0;
  while (std::getline(lines, line)) {
    ++lineno;
    if (line.empty()) continue;
    std::istringstream fields(line);
    std::string field;
    std::vector<long> row;
    while (std::getline(fields, field, ',')) {
      char* end = nullptr;
      const long v = std::strtol(field.c_str(), &end, 10);
      if (field.empty() || (*end != '\0' && *end != '\r'))
        throw std::runtime_error(path + ":" + std::to_string(lineno) + ": not an integer: \"" + field + "\"");
      row.push_back(v);
    }
    if (row.size() != kPixels + 1)
      throw std::runtime_error(path + ":" + std::to_string(lineno) + ": expected 65 columns, got " +
                               std::to_string(row.size()));
    for (int i = 0; i < kPixels; ++i) {
      if (row[i] < 0 || row[i] > 16)
        throw std::runtime_error(path + ":" + std::to_string(lineno) + ": pixel out of range 0..16");
      pixels.push_back(static_cast<float>(row[i]) / 16.0f);
    }
    if (row[kPixels] < 0 || row[kPixels] >= kClasses)
      throw std::runtime_error(path + ":" + std::to_string(lineno) + ": label out of range 0..9");
    labels.push_back(row[kPixels]);
  }
  if (labels.empty()) throw std::runtime_error(path + ": no data");

  const int64_t count = static_cast<int64_t>(labels.size());
  Dataset d{ember::empty({count, kPixels}), ember::empty({count}, ember::DType::Int64)};
  std::copy(pixels.begin(), pixels.end(), d.x.data<float>());
  std::copy(labels.begin(), labels.end(), d.y.data<int64_t>());
  return d;
}

double accuracy(ember::nn::Sequential& model, const Dataset& d) {
  ember::NoGradGuard no_grad;
  model.eval();
  ember::Tensor pred = model.forward(d.x).argmax(1);
  model.train();
  return pred.eq(d.y).sum().item().to_double() / static_cast<double>(d.y.numel());
}

}  // namespace

int main(int argc, char** argv) {
  const std::string path = argc > 1 ? argv[1] : EMBER_DIGITS_CSV;
  try {
    ember::manual_seed(0);
    Dataset all = read_digits(path);
    const int64_t n = all.y.numel(), n_train = n * 4 / 5;

    // Shuffle once, then split 80/20.
    ember::Tensor perm = ember::randperm(n);
    ember::Tensor train_idx = perm.narrow(0, 0, n_train), test_idx = perm.narrow(0, n_train, n - n_train);
    Dataset train{all.x.index_select(0, train_idx), all.y.index_select(0, train_idx)};
    Dataset test{all.x.index_select(0, test_idx), all.y.index_select(0, test_idx)};
    std::printf("digits: %lld train / %lld test images from %s\n", static_cast<long long>(n_train),
                static_cast<long long>(n - n_train), path.c_str());

    auto model = std::make_shared<ember::nn::Sequential>();
    model->push_back(std::make_shared<ember::nn::Linear>(kPixels, 128));
    model->push_back(std::make_shared<ember::nn::ReLU>());
    model->push_back(std::make_shared<ember::nn::Linear>(128, kClasses));

    ember::optim::Adam opt(model->parameters(), ember::optim::AdamOptions(3e-3));
    const int epochs = 20;
    const int64_t batch = 32;
    for (int epoch = 1; epoch <= epochs; ++epoch) {
      ember::Tensor order = ember::randperm(n_train);
      double total = 0;
      for (int64_t start = 0; start < n_train; start += batch) {
        const int64_t len = std::min(batch, n_train - start);
        ember::Tensor idx = order.narrow(0, start, len);
        ember::Tensor logits = model->forward(train.x.index_select(0, idx));
        ember::Tensor loss = ember::nn::functional::cross_entropy(logits, train.y.index_select(0, idx));
        opt.zero_grad();
        loss.backward();
        opt.step();
        total += loss.item().to_double() * static_cast<double>(len);
      }
      std::printf("epoch %2d  loss %.4f  test accuracy %.1f%%\n", epoch, total / static_cast<double>(n_train),
                  100 * accuracy(*model, test));
    }
    const double acc = accuracy(*model, test);
    std::printf("test accuracy: %.1f%%\n", 100 * acc);
    if (acc < 0.95) {
      std::fprintf(stderr, "digits_mlp: test accuracy %.1f%% is below 95%%\n", 100 * acc);
      return 1;
    }
  } catch (const std::exception& e) {
    std::fprintf(stderr, "digits_mlp: %s\n", e.what());
    return 2;
  }
  return 0;
}
