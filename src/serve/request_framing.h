// How a request's body is delimited (RFC 9112 §6): the checks httplib 0.11 leaves out. A request
// whose framing is ambiguous - header names that are no tokens ("Content-Length : 5"), differing
// Content-Length values, Content-Length beside Transfer-Encoding, two Transfer-Encodings, a body
// on GET, HEAD or OPTIONS (which httplib does not read) - is a 400 and a coding other than chunked
// a 501, before any of its body is read, so that a client (or a proxy in front) cannot read the
// bytes one way and the server another.
#pragma once
#include <httplib.h>

#include <optional>

#include "serve/api_error.h"

namespace difftx::serve {

// The error for a request whose framing is ambiguous or unsupported; nullopt for a sound one.
std::optional<ApiError> framing_error(const httplib::Request& req);

// Whether the request carries a body at all: it has a Content-Length or a Transfer-Encoding.
// Without either, a request's body is empty (RFC 9112 §6.3), whatever follows its headers.
bool has_body(const httplib::Request& req);

}  // namespace difftx::serve
