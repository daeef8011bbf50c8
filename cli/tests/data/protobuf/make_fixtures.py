"""Writes the Protobuf test fixtures of cli/tests/protobuf.rs with Google's
`protobuf` package (pip install protobuf==7.36.2), the way a producer of
such files would:

- access.desc: a FileDescriptorSet of the schema in access.proto (built
  here with descriptor_pb2, so no protoc is needed), with
  google/protobuf/timestamp.proto, which it imports;
- access.pb: the inputs of examples/requests/acme.access.documents.ndjson
  as length-delimited AccessRequest messages (_VarintBytes(len) + bytes,
  what writeDelimitedTo writes).

Run from the repository root: python3 cli/tests/data/protobuf/make_fixtures.py [OUT_DIR]
"""

import json
import os
import sys

from google.protobuf import descriptor_pb2, descriptor_pool, json_format, message_factory, timestamp_pb2
from google.protobuf.internal.encoder import _VarintBytes

HERE = os.path.dirname(os.path.abspath(__file__))
REQUESTS = os.path.join(HERE, "..", "..", "..", "..", "examples", "requests", "acme.access.documents.ndjson")
F = descriptor_pb2.FieldDescriptorProto


def enum(file, name, values):
    e = file.enum_type.add(name=name)
    for number, value in enumerate(values):
        e.value.add(name=value, number=number)


def message(file, name, fields):
    m = file.message_type.add(name=name)
    for number, (field, kind, type_name, label) in enumerate(fields, start=1):
        optional = label == "proto3_optional"
        plain = F.LABEL_OPTIONAL if optional or not label else label
        f = m.field.add(name=field, number=number, type=kind, label=plain)
        if type_name:
            f.type_name = type_name
        if optional:
            f.proto3_optional = True
            f.oneof_index = len(m.oneof_decl)
            m.oneof_decl.add(name="_" + field)
    return m


def schema():
    file = descriptor_pb2.FileDescriptorProto(name="access.proto", package="acme.access", syntax="proto3")
    file.dependency.append("google/protobuf/timestamp.proto")
    enum(file, "Role", ["guest", "employee", "manager", "admin"])
    enum(file, "Level", ["public", "internal", "confidential", "secret"])
    enum(file, "Action", ["read", "edit", "share", "delete"])
    s, b, e, m = F.TYPE_STRING, F.TYPE_BOOL, F.TYPE_ENUM, F.TYPE_MESSAGE
    message(file, "User", [
        ("id", s, None, None), ("role", e, ".acme.access.Role", None),
        ("clearance", e, ".acme.access.Level", None), ("department", s, None, None), ("mfa", b, None, None),
    ])
    message(file, "Document", [
        ("id", s, None, None), ("owner", s, None, None), ("department", s, None, None),
        ("classification", e, ".acme.access.Level", None), ("shared_with", s, None, F.LABEL_REPEATED),
        ("locked", b, None, None),
    ])
    stamp = ".google.protobuf.Timestamp"
    message(file, "AccessRequest", [
        ("user", m, ".acme.access.User", None), ("document", m, ".acme.access.Document", None),
        ("action", e, ".acme.access.Action", None), ("at", m, stamp, None),
        ("session_started", m, stamp, None), ("ip_country", s, None, "proto3_optional"),
    ])
    return file


def main():
    out = sys.argv[1] if len(sys.argv) > 1 else HERE
    timestamp = descriptor_pb2.FileDescriptorProto()
    timestamp_pb2.DESCRIPTOR.CopyToProto(timestamp)
    access = schema()
    pool = descriptor_pool.DescriptorPool()
    pool.Add(timestamp)
    pool.Add(access)
    request = message_factory.GetMessageClass(pool.FindMessageTypeByName("acme.access.AccessRequest"))
    with open(os.path.join(out, "access.desc"), "wb") as f:
        f.write(descriptor_pb2.FileDescriptorSet(file=[timestamp, access]).SerializeToString())
    with open(REQUESTS) as lines, open(os.path.join(out, "access.pb"), "wb") as f:
        for line in lines:
            if line.strip():
                record = json_format.ParseDict(json.loads(line)["input"], request())
                data = record.SerializeToString(deterministic=True)
                f.write(_VarintBytes(len(data)) + data)


if __name__ == "__main__":
    main()
