#include "runtime/transport/RelayAbi.h"

#include "runtime/transport/RelayProducer.h"

using sonde::transport::RelayProducer;

namespace {
RelayProducer &producerOf(sonde_relay_producer *p) { return *reinterpret_cast<RelayProducer *>(p); }
} // namespace

extern "C" char *sonde_relay_reserve(sonde_relay_producer *producer, uint32_t bytes) {
  return producerOf(producer).reserve(bytes);
}

extern "C" void sonde_relay_commit(sonde_relay_producer *producer) {
  producerOf(producer).commit();
}

extern "C" void sonde_relay_flush(sonde_relay_producer *producer) { producerOf(producer).flush(); }
