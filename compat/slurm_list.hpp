// compat/slurm_list.hpp - owners for the lists libslurm hands back, shared by
// every program that reads slurmdbd (allot-syncd, mylimits): one deleter per
// handle type, freed with Slurm's own destructor.
#pragma once

#include <memory>

#include "compat/slurm.hpp"

namespace allot::slurm_compat {

struct ListDeleter {
    void operator()(list_t* l) const
    {
        if (l) slurm_list_destroy(l);
    }
};
using ListPtr = std::unique_ptr<list_t, ListDeleter>;

struct ListIteratorDeleter {
    void operator()(list_itr_t* it) const
    {
        if (it) slurm_list_iterator_destroy(it);
    }
};
using ListIteratorPtr = std::unique_ptr<list_itr_t, ListIteratorDeleter>;

// Calls f(T*) for every item of `l` (a null list has none).
template <typename T, typename F>
void for_each(list_t* l, F&& f)
{
    if (!l) return;
    ListIteratorPtr it(slurm_list_iterator_create(l));
    while (void* x = slurm_list_next(it.get())) f(static_cast<T*>(x));
}

}  // namespace allot::slurm_compat
