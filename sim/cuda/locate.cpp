#include "locate.h"

namespace sim {

int region_device(uint64_t addr, uint64_t base, uint64_t length) {
    if (addr < base) return -1;
    uint64_t d = (addr - base) / kDeviceStride;
    if ((addr - base) % kDeviceStride >= length || d >= state().devices.size()) return -1;
    return int(d);
}

std::optional<Located> locate(uint64_t p) {
    State &s = state();
    // Host blocks first: they come from host_memory.cpp's own address range,
    // so they never collide with the device regions below.
    if (auto h = s.host.upper_bound(p); h != s.host.begin()) {
        --h;
        const HostBlock &b = h->second;
        if (p - h->first < b.size)
            return Located{b.managed ? Kind::Managed : Kind::Pinned, h->first, b.size, b.device, b.ctx, nullptr};
    }
    if (int d = region_device(p, kHeapBase, kHeapLength); d >= 0) {
        if (auto b = s.devices[d]->heap.find(p)) return Located{Kind::Heap, b->addr, b->size, d, b->ctx, nullptr};
        return std::nullopt;
    }
    if (int d = region_device(p, kAsyncBase, kAsyncLength); d >= 0) {
        for (auto &[key, pool] : s.pools)
            if (pool->device == d)
                if (auto b = pool->find(p)) return Located{Kind::Pool, b->addr, b->size, d, b->ctx, pool.get()};
        return std::nullopt;
    }
    if (region_device(p, kVmmBase, kVmmLength) >= 0) {
        if (auto i = s.imports.upper_bound(p);
            i != s.imports.begin() && p - std::prev(i)->first < std::prev(i)->second.size)
            return Located{
                Kind::Vmm, std::prev(i)->first, std::prev(i)->second.size, std::prev(i)->second.device, nullptr,
                nullptr};
        auto m = s.mappings.upper_bound(p);
        if (m == s.mappings.begin()) return std::nullopt;
        --m;
        if (p - m->first >= m->second.size) return std::nullopt;
        return Located{Kind::Vmm, m->first, m->second.size, s.handles.at(m->second.handle).device, nullptr, nullptr};
    }
    return std::nullopt;
}

}  // namespace sim
