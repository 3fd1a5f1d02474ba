#include "grammar/grammar.h"

#include <string>

namespace nanoserve::grammar {

uint32_t GrammarBuilder::new_rule() {
  rules_.emplace_back();
  defined_.push_back(false);
  return static_cast<uint32_t>(rules_.size() - 1);
}

void GrammarBuilder::define(uint32_t rule, const Expr& body) {
  std::vector<Alternative> alternatives;
  auto add = [&](const Expr& part) {
    Alternative a;
    lower(part, a);
    a.push_back(Element{Element::Kind::End, 0});
    count(a.size());
    alternatives.push_back(std::move(a));
  };
  if (body.kind == Expr::Kind::Alt)
    for (const Expr& choice : body.children) add(choice);
  else
    add(body);
  // lower() may have added rules: index again rather than hold a reference across it.
  rules_[rule] = std::move(alternatives);
  defined_[rule] = true;
}

uint32_t GrammarBuilder::add_rule(const Expr& body) {
  const uint32_t rule = new_rule();
  define(rule, body);
  return rule;
}

void GrammarBuilder::lower(const Expr& e, Alternative& out) {
  switch (e.kind) {
    case Expr::Kind::Bytes:
      out.push_back(Element{Element::Kind::Bytes, byte_set_index(e.bytes)});
      return;
    case Expr::Kind::Seq:
      for (const Expr& part : e.children) lower(part, out);
      return;
    case Expr::Kind::Alt:
      if (e.children.size() == 1)
        lower(e.children[0], out);
      else
        out.push_back(Element{Element::Kind::Rule, add_rule(e)});
      return;
    case Expr::Kind::Rule:
      out.push_back(Element{Element::Kind::Rule, e.rule});
      return;
    case Expr::Kind::Repeat:
      lower_repeat(e, out);
      return;
  }
}

// x{min,max}: min copies of x, then x* as S ::= x S | ε, or up to k more as
// O_k ::= x O_(k-1) | ε. Right recursion: the matcher's stack does not grow with the count.
void GrammarBuilder::lower_repeat(const Expr& e, Alternative& out) {
  const Expr& part = e.children.at(0);
  // One element stands for the part in every copy: the part itself when it is one byte set,
  // else a rule of its own.
  const Expr unit = part.kind == Expr::Kind::Bytes || part.kind == Expr::Kind::Rule ? part : rule_ref(add_rule(part));
  for (int i = 0; i < e.min; ++i) {
    count(1);
    lower(unit, out);
  }
  if (e.max == Expr::kUnbounded) {
    const uint32_t loop = new_rule();
    define(loop, alt({seq({unit, rule_ref(loop)}), empty()}));
    out.push_back(Element{Element::Kind::Rule, loop});
    return;
  }
  if (e.max <= e.min) return;
  uint32_t more = add_rule(alt({unit, empty()}));
  for (int k = 2; k <= e.max - e.min; ++k) more = add_rule(alt({seq({unit, rule_ref(more)}), empty()}));
  out.push_back(Element{Element::Kind::Rule, more});
}

uint32_t GrammarBuilder::byte_set_index(const ByteSet& set) {
  // Grammars repeat a set close to where it was first used: only the last 64 are looked at,
  // so that building stays linear (a set missed is stored twice, which costs only memory).
  const size_t n = byte_sets_.size();
  for (size_t i = n; i > 0 && i + 64 > n; --i)
    if (byte_sets_[i - 1] == set) return static_cast<uint32_t>(i - 1);
  byte_sets_.push_back(set);
  return static_cast<uint32_t>(n);
}

void GrammarBuilder::count(size_t elements) {
  n_elements_ += elements;
  if (n_elements_ > kMaxElements)
    throw GrammarTooLarge("the grammar would have more than " + std::to_string(kMaxElements) + " elements");
}

// A rule is productive when one of its alternatives is all productive elements: grow the set
// of productive rules until it stops growing.
bool Grammar::matches_nothing() const {
  const size_t n_rules = rule_starts_.size() - 1;
  std::vector<bool> productive(n_rules, false);
  for (bool grew = true; grew;) {
    grew = false;
    for (size_t r = 0; r < n_rules; ++r) {
      if (productive[r]) continue;
      for (uint32_t position : alternatives(static_cast<uint32_t>(r))) {
        bool all = true;
        for (;; ++position) {
          const Element& e = elements_[position];
          if (e.kind == Element::Kind::End) break;
          if ((e.kind == Element::Kind::Bytes && byte_sets_[e.value].empty()) ||
              (e.kind == Element::Kind::Rule && !productive[e.value]))
            all = false;
        }
        if (all) {
          productive[r] = grew = true;
          break;
        }
      }
    }
  }
  return !productive[root_];
}

Grammar GrammarBuilder::build(uint32_t root) {
  Grammar g;
  g.byte_sets_ = byte_sets_;
  g.root_ = root;
  g.rule_starts_.push_back(0);
  // Positions are known only once every rule is laid out: first the alternatives' starts.
  for (size_t r = 0; r < rules_.size(); ++r) {
    if (!defined_[r]) throw std::logic_error("grammar rule " + std::to_string(r) + " was never defined");
    for (const Alternative& a : rules_[r]) {
      g.alternatives_.push_back(static_cast<uint32_t>(g.elements_.size()));
      g.elements_.insert(g.elements_.end(), a.begin(), a.end());
    }
    g.rule_starts_.push_back(static_cast<uint32_t>(g.alternatives_.size()));
  }
  return g;
}

}  // namespace nanoserve::grammar
