// Translation between the control protocol's messages (xtrace_control.capnp) and the
// capture's own types, used by both ends of the socket.
#pragma once

#include <vector>

#include "capture/output/capture_output.h"
#include "capture/capture_options.h"
#include "daemon/capture_controller.h"
#include "daemon/xtrace_control.capnp.h"

namespace xtrace::control_codec {

void EncodeRequest(const CaptureOptions& request, control_schema::CaptureRequest::Builder out);
CaptureOptions DecodeRequest(control_schema::CaptureRequest::Reader in);

void EncodeStatus(const ControllerStatus& status, const std::string& output_dir,
                  control_schema::CaptureStatus::Builder out);

void EncodeFiles(const std::vector<CaptureFileInfo>& files,
                 capnp::List<control_schema::CaptureFile>::Builder out);

}  // namespace xtrace::control_codec
