/* e2e_dlcycle's library. */
#pragma once

#include <stdint.h>

int64_t dlcycle_work(int64_t n);
void dlcycle_stock_hit(int64_t n);
int64_t dlcycle_stock_jump(int64_t n);
