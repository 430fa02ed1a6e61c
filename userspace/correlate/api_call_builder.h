// Builds ApiCall events from generic Level Zero call records, giving each recorded word the
// meaning model/ze_api.h's table assigns it.
#pragma once

#include "decode/record_decoder.h"
#include "model/event.h"

namespace xtrace {

ApiCall BuildApiCall(const DecodedZeCall& record);
ApiCall BuildApiCall(const DecodedZeExecute& record);

}  // namespace xtrace
