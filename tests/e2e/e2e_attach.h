/* e2e_attach's stock sys/sdt.h marker, in its own file: the stock header and
 * sonde/sdt.h define the same macros. */
#pragma once

void e2e_attach_stock_tick(long id, long i);
