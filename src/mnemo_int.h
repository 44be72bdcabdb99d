/*
 * mnemo_int.h — the private header of the API layer (src/mnemo*.c): the public functions are
 * leaves that check their arguments and call the engine (src/engine/, docs/ARCHITECTURE.md).
 */
#ifndef MN_MNEMO_INT_H
#define MN_MNEMO_INT_H

#include "engine/engine.h"

#endif
