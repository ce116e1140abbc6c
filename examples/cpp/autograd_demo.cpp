// The C++ twin of the Python snippet in the README:
//
//   x = ember.randn(64, 784, requires_grad=True)
//   w = ember.randn(784, 10, requires_grad=True)
//   loss = (x @ w).relu().log_softmax(dim=1).mean()
//   loss.backward()
//   print(w.grad.shape, x.grad.norm())
#include <iostream>

#include <ember/ember.h>

int main() {
  using namespace ember;
  try {
    manual_seed(0);
    Tensor x = randn({64, 784}).requires_grad_();
    Tensor w = randn({784, 10}).requires_grad_();

    Tensor loss = x.matmul(w).relu().log_softmax(1).mean();
    loss.backward();

    std::cout << "loss: " << loss.item().to_double() << "\n"
              << "w.grad shape: " << w.grad().shape_str() << "\n"
              << "x.grad norm: " << x.grad().norm().item().to_double() << "\n";
  } catch (const Error& e) {
    std::cerr << "error: " << e.what() << "\n";
    return 1;
  }
  return 0;
}
