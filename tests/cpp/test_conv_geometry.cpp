// Every convolution ember runs reaches its kernel (cuDNN on the GPU) as a
// forward convolution from an image to a grid with one padding per dim on
// both sides, and cuDNN refuses any other shapes. core/ops/conv.cpp checks
// that rule on every device, so these run on machines without a GPU:
// padding="same" with an even kernel (asymmetric padding) and conv_transpose
// with output_padding >= stride used to hand the kernels shapes cuDNN
// refuses; both now pass the rule, forward and backward.
#include "util.h"

using namespace ember;

TEST_CASE("conv geometry: shapes cuDNN would refuse are refused on every device", "[conv_geometry]") {
  const Tensor x = randn({1, 2, 5, 6}), w = randn({3, 2, 4, 2});
  // padding="same" for a 4 x 2 kernel pads (1, 2) rows and (0, 1) columns:
  // with the begin padding on both sides the grid is 4 x 5, not 5 x 6.
  cpu::ConvGeom g;
  g.pad_h = 1;
  test::require_throws<Error>([&] { conv_detail::conv(x, w, Tensor(), g, 5, 6); }, "which cuDNN would refuse");
  test::require_throws<Error>([&] { conv_detail::conv_weight(x, randn({1, 3, 5, 6}), g, 4, 2); },
                              "which cuDNN would refuse");
  // conv_transpose2d(dilation=3, output_padding=2) of a 3 x 3 input with a
  // 2 x 2 kernel is 8 x 8, but the convolution of an 8 x 8 image gives 5 x 5.
  cpu::ConvGeom t;
  t.dil_h = t.dil_w = 3;
  test::require_throws<Error>(
      [&] { conv_detail::conv_transpose(randn({1, 2, 3, 3}), randn({2, 2, 2, 2}), Tensor(), t, 8, 8); },
      "which cuDNN would refuse");
  REQUIRE(conv_detail::conv(x, w, Tensor(), g, 4, 5).shape() == Shape{1, 3, 4, 5});
}

TEST_CASE("conv geometry: same padding with even kernels and large output padding pass the rule", "[conv_geometry]") {
  const Tensor x = randn({2, 2, 5, 6}).requires_grad_(true), w = randn({3, 2, 4, 2}).requires_grad_(true);
  const Tensor y = conv2d(x, w, Tensor(), IntList{1}, std::string("same"), IntList{1}, 1);
  REQUIRE(y.shape() == Shape{2, 3, 5, 6});
  y.sum().backward();
  REQUIRE(x.grad().shape() == x.shape());
  REQUIRE(w.grad().shape() == w.shape());

  const Tensor xt = randn({1, 2, 3, 3}).requires_grad_(true), wt = randn({2, 2, 2, 2}).requires_grad_(true);
  const Tensor yt = conv_transpose2d(xt, wt, Tensor(), IntList{1}, IntList{0}, IntList{2}, 1, IntList{3});
  REQUIRE(yt.shape() == Shape{1, 2, 8, 8});
  yt.sum().backward();
  REQUIRE(xt.grad().shape() == xt.shape());
  REQUIRE(wt.grad().shape() == wt.shape());
}
