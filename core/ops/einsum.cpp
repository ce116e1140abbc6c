// einsum, composed of ember ops: the equation is parsed into one label per
// dim of each operand; repeated labels on one operand become diagonals
// (diagonal views); labels no later step needs are summed away as early as
// possible; then the operands are contracted left to right, each pair as one
// (batched, broadcasting) matmul of
// [batch..., left, contracted] by [batch..., contracted, right]. Pairs with
// nothing to contract are a broadcasting mul instead (an outer or elementwise
// product: no reduction, so no product tensor larger than the result).
#include <ember/core/ops/einsum.h>

#include <algorithm>
#include <functional>
#include <utility>

#include <ember/core/error.h>
#include <ember/core/ops/binary.h>
#include <ember/core/ops/diagonal.h>
#include <ember/core/ops/matmul.h>
#include <ember/core/ops/reduce.h>
#include <ember/core/ops/shape.h>
#include <ember/core/type_promotion.h>

namespace ember {

namespace {

// Labels are numbered as PyTorch does: A-Z are 0-25, a-z are 26-51 (so an
// implicit output sorts upper case first). The dims '...' covers get the
// numbers from kLetters on, aligned to the right across operands.
constexpr int kLetters = 52;
using Labels = std::vector<int>;

bool is_letter(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
int label_of(char c) { return c <= 'Z' ? c - 'A' : c - 'a' + 26; }
char char_of(int label) { return static_cast<char>(label < 26 ? 'A' + label : 'a' + label - 26); }

bool contains(const Labels& ls, int id) { return std::find(ls.begin(), ls.end(), id) != ls.end(); }
int64_t position(const Labels& ls, int id) { return std::find(ls.begin(), ls.end(), id) - ls.begin(); }

// One side of the equation: its letters, and where '...' sits among them.
struct Term {
  Labels labels;
  int64_t ellipsis = -1;  // index into labels before which '...' stands; -1: none
};

// The tail of every error message: the equation and the operands' shapes.
struct Context {
  const std::string& equation;
  const std::vector<Tensor>& operands;
  std::string operator()() const {
    std::string s = str(" (equation '", equation, "', operand shapes");
    for (size_t i = 0; i < operands.size(); ++i) s += str(i ? ", " : " ", operands[i].shape_str());
    return s + ")";
  }
};

Term parse_term(const std::string& eq, size_t begin, size_t end, const std::string& what, const Context& ctx) {
  Term t;
  for (size_t i = begin; i < end; ++i) {
    const char c = eq[i];
    if (c == ' ') continue;
    if (c == '.') {
      EMBER_CHECK(t.ellipsis < 0, Error, "einsum: found '.' for ", what, " for which an ellipsis was already found",
                  ctx());
      EMBER_CHECK(i + 2 < end && eq[i + 1] == '.' && eq[i + 2] == '.', Error, "einsum: found '.' for ", what,
                  " that is not part of any ellipsis", ctx());
      t.ellipsis = static_cast<int64_t>(t.labels.size());
      i += 2;
      continue;
    }
    EMBER_CHECK(is_letter(c), Error, "einsum: invalid subscript given at index ", i,
                " in the equation string, subscripts must be in [a-zA-Z]", ctx());
    t.labels.push_back(label_of(c));
  }
  return t;
}

// The term's labels with '...' replaced by the ids of the `covered` dims it stands for.
Labels expand_ellipsis(const Term& t, int64_t covered, int64_t ell_dims) {
  Labels ids;
  for (size_t j = 0; j <= t.labels.size(); ++j) {
    if (static_cast<int64_t>(j) == t.ellipsis) {
      for (int64_t k = 0; k < covered; ++k) ids.push_back(static_cast<int>(kLetters + ell_dims - covered + k));
    }
    if (j < t.labels.size()) ids.push_back(t.labels[j]);
  }
  return ids;
}

std::string label_name(int id, int ell_dims) {
  return id < kLetters ? str("subscript ", char_of(id)) : str("dimension ", id - kLetters - ell_dims, " covered by '...'");
}

// Repeated labels of one operand ('ii->i'): take diagonals until each label is on one dim.
void take_diagonals(Tensor& t, Labels& ids, size_t operand, const Context& ctx) {
  for (bool again = true; again;) {
    again = false;
    for (size_t a = 0; a < ids.size() && !again; ++a) {
      for (size_t b = a + 1; b < ids.size() && !again; ++b) {
        if (ids[a] != ids[b]) continue;
        EMBER_CHECK(t.size(a) == t.size(b), Error, "einsum: subscript ", char_of(ids[a]), " is repeated for operand ",
                    operand, " but the sizes don't match, ", t.size(b), " != ", t.size(a), ctx());
        const int id = ids[a];
        t = diagonal(t, 0, static_cast<int64_t>(a), static_cast<int64_t>(b));  // a view; the diagonal goes last
        ids.erase(ids.begin() + b);
        ids.erase(ids.begin() + a);
        ids.push_back(id);
        again = true;
      }
    }
  }
}

Dims positions(const Labels& ids, const Labels& wanted) {
  Dims out;
  for (int id : wanted) out.push_back(position(ids, id));
  return out;
}

int64_t size_product(const Tensor& t, const Dims& dims, size_t from, size_t to) {
  int64_t n = 1;
  for (size_t k = from; k < to; ++k) n *= t.size(dims[k]);
  return n;
}

struct Operand {
  Tensor t;
  Labels ids;  // one per dim of t
};

// Sums t over the dims whose label `keep` rejects. Multi-operand equations
// keep the operands' dtype (the products need one dtype); a lone operand
// sums as sum() does (integers to int64), as PyTorch's einsum.
void sum_unneeded(Operand& x, const std::function<bool(int)>& keep, bool keep_dtype) {
  Dims dims;
  Labels kept;
  for (size_t j = 0; j < x.ids.size(); ++j) {
    if (keep(x.ids[j])) {
      kept.push_back(x.ids[j]);
    } else {
      dims.push_back(static_cast<int64_t>(j));
    }
  }
  if (dims.empty()) return;
  x.t = sum(x.t, dims, false, keep_dtype ? std::optional<DType>(x.t.dtype()) : std::nullopt);
  x.ids = kept;
}

// a and b into one operand: labels of both that `later` needs are batch dims,
// labels of both that it does not are contracted, the others stay.
Operand contract(Operand a, Operand b, const std::function<bool(int)>& later) {
  Labels batch, left, inner, right;
  for (int id : a.ids) {
    if (!contains(b.ids, id)) {
      left.push_back(id);
    } else {
      (later(id) ? batch : inner).push_back(id);
    }
  }
  for (int id : b.ids) {
    if (!contains(a.ids, id)) right.push_back(id);
  }
  // A contracted label of size 1 on one side broadcasts: sum the other side over it first.
  for (int id : inner) {
    const int64_t pa = position(a.ids, id), pb = position(b.ids, id);
    if (a.t.size(pa) == b.t.size(pb)) continue;
    const bool a_is_one = a.t.size(pa) == 1;
    Tensor& big = a_is_one ? b.t : a.t;
    big = sum(big, {a_is_one ? pb : pa}, true, big.dtype());
  }
  Labels ids = batch;
  ids.insert(ids.end(), left.begin(), left.end());
  ids.insert(ids.end(), right.begin(), right.end());
  const size_t nb = batch.size(), nl = left.size(), nr = right.size();

  if (inner.empty()) {  // an outer / elementwise product: broadcasting mul
    Labels a_order = batch, b_order = batch;
    a_order.insert(a_order.end(), left.begin(), left.end());
    b_order.insert(b_order.end(), right.begin(), right.end());
    Tensor x = permute(a.t, positions(a.ids, a_order));
    for (size_t k = 0; k < nr; ++k) x = unsqueeze(x, -1);
    Tensor y = permute(b.t, positions(b.ids, b_order));
    for (size_t k = 0; k < nl; ++k) y = unsqueeze(y, static_cast<int64_t>(nb));
    return {mul(x, y), ids};
  }

  Labels a_order = batch, b_order = batch;
  a_order.insert(a_order.end(), left.begin(), left.end());
  a_order.insert(a_order.end(), inner.begin(), inner.end());
  b_order.insert(b_order.end(), inner.begin(), inner.end());
  b_order.insert(b_order.end(), right.begin(), right.end());
  const Dims da = positions(a.ids, a_order), db = positions(b.ids, b_order);
  Shape sa, sb;
  for (size_t k = 0; k < nb; ++k) {
    sa.push_back(a.t.size(da[k]));
    sb.push_back(b.t.size(db[k]));
  }
  sa.push_back(size_product(a.t, da, nb, nb + nl));
  sa.push_back(size_product(a.t, da, nb + nl, da.size()));
  sb.push_back(sa.back());
  sb.push_back(size_product(b.t, db, nb + inner.size(), db.size()));
  const Tensor product = matmul(reshape(permute(a.t, da), sa), reshape(permute(b.t, db), sb));
  Shape shape;
  for (size_t k = 0; k < nb; ++k) shape.push_back(product.size(static_cast<int64_t>(k)));
  for (size_t k = 0; k < nl; ++k) shape.push_back(a.t.size(da[nb + k]));
  for (size_t k = 0; k < nr; ++k) shape.push_back(b.t.size(db[nb + inner.size() + k]));
  return {reshape(product, shape), ids};
}

}  // namespace

Tensor einsum(const std::string& equation, const std::vector<Tensor>& operands) {
  const Context ctx{equation, operands};
  EMBER_CHECK(!operands.empty(), Error, "einsum: must specify the equation string and at least one operand",
              " (equation '", equation, "')");
  for (size_t i = 0; i < operands.size(); ++i) {
    EMBER_CHECK(operands[i].defined(), ValueError, "einsum: operand ", i, " is an undefined tensor");
  }
  common_device("einsum", operands);
  for (size_t i = 1; i < operands.size(); ++i) {
    EMBER_CHECK(operands[i].dtype() == operands[0].dtype(), Error,
                "einsum: expected all operands to have the same dtype, but operand 0 is ",
                dtype_name(operands[0].dtype()), " and operand ", i, " is ", dtype_name(operands[i].dtype()), ctx());
  }

  // ---- parse: one term per operand, then the output
  const size_t arrow = equation.find("->");
  const size_t lhs_end = arrow == std::string::npos ? equation.size() : arrow;
  const size_t n_terms = 1 + std::count(equation.begin(), equation.begin() + lhs_end, ',');
  EMBER_CHECK(n_terms <= operands.size(), Error,
              "einsum: fewer operands were provided than specified in the equation", ctx());
  EMBER_CHECK(n_terms >= operands.size(), Error, "einsum: more operands were provided than specified in the equation",
              ctx());
  std::vector<Term> terms;
  for (size_t begin = 0, i = 0; i < n_terms; ++i) {
    const size_t end = std::min(equation.find(',', begin), lhs_end);
    terms.push_back(parse_term(equation, begin, end, str("operand ", i), ctx));
    begin = end + 1;
  }
  int64_t ell_dims = 0;  // the most dims any operand's '...' covers
  for (size_t i = 0; i < n_terms; ++i) {
    const int64_t nl = static_cast<int64_t>(terms[i].labels.size()), nd = operands[i].dim();
    if (terms[i].ellipsis < 0) {
      EMBER_CHECK(nl == nd, Error, "einsum: the number of subscripts in the equation (", nl,
                  ") does not match the number of dimensions (", nd, ") for operand ", i, " and no ellipsis was given",
                  ctx());
    } else {
      EMBER_CHECK(nl <= nd, Error, "einsum: the number of subscripts in the equation (", nl,
                  ") is more than the number of dimensions (", nd, ") for operand ", i, ctx());
      ell_dims = std::max(ell_dims, nd - nl);
    }
  }
  std::vector<int> uses(kLetters, 0);
  for (const Term& t : terms) {
    for (int l : t.labels) ++uses[l];
  }
  Labels out_ids;
  if (arrow == std::string::npos) {  // implicit: '...' dims, then the labels used once, in order
    for (int64_t k = 0; k < ell_dims; ++k) out_ids.push_back(static_cast<int>(kLetters + k));
    for (int l = 0; l < kLetters; ++l) {
      if (uses[l] == 1) out_ids.push_back(l);
    }
  } else {
    const Term out = parse_term(equation, arrow + 2, equation.size(), "the output", ctx);
    for (size_t j = 0; j < out.labels.size(); ++j) {
      const int l = out.labels[j];
      EMBER_CHECK(uses[l] > 0, Error, "einsum: output subscript ", char_of(l),
                  " does not appear in the equation for any input operand", ctx());
      EMBER_CHECK(std::find(out.labels.begin(), out.labels.begin() + j, l) == out.labels.begin() + j, Error,
                  "einsum: output subscript ", char_of(l), " appears more than once in the output", ctx());
    }
    // An output without '...' sums the dims '...' covers, as PyTorch does.
    out_ids = expand_ellipsis(out, out.ellipsis < 0 ? 0 : ell_dims, ell_dims);
  }

  // ---- each operand: its labels, diagonals, and every label's size (broadcast)
  std::vector<Operand> ops;
  std::vector<int64_t> sizes(kLetters + ell_dims, -1);
  for (size_t i = 0; i < n_terms; ++i) {
    Operand x{operands[i], expand_ellipsis(terms[i], operands[i].dim() - terms[i].labels.size(), ell_dims)};
    take_diagonals(x.t, x.ids, i, ctx);
    for (size_t j = 0; j < x.ids.size(); ++j) {
      const int id = x.ids[j];
      const int64_t n = x.t.size(static_cast<int64_t>(j));
      if (sizes[id] < 0 || sizes[id] == 1) {
        sizes[id] = n;
      } else if (n != 1 && n != sizes[id]) {
        throw Error(str("einsum: ", label_name(id, static_cast<int>(ell_dims)), " has size ", n, " for operand ", i,
                        ", which does not broadcast with the size ", sizes[id], " seen before", ctx()));
      }
    }
    ops.push_back(std::move(x));
  }

  // ---- contract left to right, summing each label once nothing later needs it
  const bool keep_dtype = ops.size() > 1;
  auto needed_after = [&](int id, size_t i) {  // by the output or an operand after i
    if (contains(out_ids, id)) return true;
    for (size_t j = i + 1; j < ops.size(); ++j) {
      if (contains(ops[j].ids, id)) return true;
    }
    return false;
  };
  Operand acc = ops[0];
  sum_unneeded(acc, [&](int id) { return needed_after(id, 0); }, keep_dtype);
  for (size_t i = 1; i < ops.size(); ++i) {
    Operand& next = ops[i];
    sum_unneeded(next, [&](int id) { return contains(acc.ids, id) || needed_after(id, i); }, keep_dtype);
    sum_unneeded(acc, [&](int id) { return contains(next.ids, id) || needed_after(id, i); }, keep_dtype);
    acc = contract(acc, next, [&](int id) { return needed_after(id, i); });
  }
  sum_unneeded(acc, [&](int id) { return contains(out_ids, id); }, keep_dtype);
  return permute(acc.t, positions(acc.ids, out_ids));
}

}  // namespace ember
