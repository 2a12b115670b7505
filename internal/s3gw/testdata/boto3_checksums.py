# The boto3 checksum test (checksum_clients_test.go, TestBoto3NewerFeatures): python3 boto3_checksums.py
# ENDPOINT BUCKET with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set.
# Prints "boto3 checksums OK". (CRC32C and CRC64NVME need botocore's CRT
# extra on the client side: the Go tests cover them.)
import base64, hashlib, io, os, sys, zlib
import boto3, botocore
from botocore.config import Config
ep, b = sys.argv[1], sys.argv[2]
s3 = boto3.client("s3", endpoint_url=ep, config=Config(signature_version="s3v4"))
s3.create_bucket(Bucket=b)
def b64(d): return base64.b64encode(d).decode()
def crc32(d): return b64(zlib.crc32(d).to_bytes(4, "big"))
def sha(name, d): return b64(hashlib.new(name, d).digest())
body = b"flexible checksums"
# boto3's own choice (CRC32 since botocore 1.36) is stored and returned.
s3.put_object(Bucket=b, Key="default", Body=body)
h = s3.head_object(Bucket=b, Key="default", ChecksumMode="ENABLED")
assert h.get("ChecksumCRC32") == crc32(body), h
assert "ChecksumCRC32" not in s3.head_object(Bucket=b, Key="default"), "checksum without ChecksumMode"
for alg, name in (("SHA1", "sha1"), ("SHA256", "sha256")):
    r = s3.put_object(Bucket=b, Key=alg, Body=body, ChecksumAlgorithm=alg)
    assert r["Checksum" + alg] == sha(name, body), r
    g = s3.get_object(Bucket=b, Key=alg, ChecksumMode="ENABLED")
    assert g["Body"].read() == body and g["Checksum" + alg] == sha(name, body), g
l = {c["Key"]: c for c in s3.list_objects_v2(Bucket=b)["Contents"]}
assert l["SHA1"]["ChecksumAlgorithm"] == ["SHA1"] and l["default"]["ChecksumAlgorithm"] == ["CRC32"], l
try:
    s3.put_object(Bucket=b, Key="bad", Body=body, ChecksumSHA256=sha("sha256", b"something else"))
    raise SystemExit("a wrong SHA-256 was accepted")
except botocore.exceptions.ClientError as e:
    assert e.response["Error"]["Code"] == "BadDigest", e.response
# A managed multipart upload with SHA-1: each part's, then the composite "-N".
p1, p2 = os.urandom(5 << 20), os.urandom(1000)
s3.upload_fileobj(io.BytesIO(p1 + p2), b, "mp-sha1", ExtraArgs={"ChecksumAlgorithm": "SHA1"},
                  Config=boto3.s3.transfer.TransferConfig(multipart_threshold=5 << 20, multipart_chunksize=5 << 20))
want = b64(hashlib.sha1(hashlib.sha1(p1).digest() + hashlib.sha1(p2).digest()).digest()) + "-2"
h = s3.head_object(Bucket=b, Key="mp-sha1", ChecksumMode="ENABLED")
assert h["ChecksumSHA1"] == want and h.get("ChecksumType") == "COMPOSITE", (h, want)
# One part of it, with its checksum (which botocore checks against the body).
g = s3.get_object(Bucket=b, Key="mp-sha1", PartNumber=2, ChecksumMode="ENABLED")
assert g["Body"].read() == p2 and g["PartsCount"] == 2 and g["ChecksumSHA1"] == sha("sha1", p2), g
# By hand, a FULL_OBJECT CRC32: ListParts shows the parts' CRCs, Complete
# gives the whole object's.
up = s3.create_multipart_upload(Bucket=b, Key="mp-crc", ChecksumAlgorithm="CRC32", ChecksumType="FULL_OBJECT")
assert up["ChecksumAlgorithm"] == "CRC32" and up["ChecksumType"] == "FULL_OBJECT", up
parts = []
for n, p in ((1, p1), (2, p2)):
    r = s3.upload_part(Bucket=b, Key="mp-crc", UploadId=up["UploadId"], PartNumber=n, Body=p, ChecksumAlgorithm="CRC32")
    assert r["ChecksumCRC32"] == crc32(p), r
    parts.append({"PartNumber": n, "ETag": r["ETag"], "ChecksumCRC32": r["ChecksumCRC32"]})
lp = s3.list_parts(Bucket=b, Key="mp-crc", UploadId=up["UploadId"])
assert [p["ChecksumCRC32"] for p in lp["Parts"]] == [crc32(p1), crc32(p2)] and lp["ChecksumAlgorithm"] == "CRC32", lp
c = s3.complete_multipart_upload(Bucket=b, Key="mp-crc", UploadId=up["UploadId"], MultipartUpload={"Parts": parts},
                                 ChecksumCRC32=crc32(p1 + p2), ChecksumType="FULL_OBJECT")
assert c["ChecksumCRC32"] == crc32(p1 + p2) and c["ChecksumType"] == "FULL_OBJECT", c
g = s3.get_object(Bucket=b, Key="mp-crc", ChecksumMode="ENABLED")
assert g["Body"].read() == p1 + p2 and g["ChecksumCRC32"] == crc32(p1 + p2), g
# GetObjectAttributes: a single-part object, then the multipart ones.
a = s3.get_object_attributes(Bucket=b, Key="SHA256", ObjectAttributes=["ETag", "Checksum", "ObjectSize", "StorageClass", "ObjectParts"])
assert a["ETag"] == hashlib.md5(body).hexdigest() and a["Checksum"]["ChecksumSHA256"] == sha("sha256", body) and a["ObjectSize"] == len(body), a
assert a["StorageClass"] == "STANDARD" and "ObjectParts" not in a, a
a = s3.get_object_attributes(Bucket=b, Key="mp-sha1", ObjectAttributes=["Checksum", "ObjectParts"], MaxParts=1)
assert a["Checksum"]["ChecksumSHA1"] == want.split("-")[0] and a["Checksum"]["ChecksumType"] == "COMPOSITE", a
op = a["ObjectParts"]
assert op["TotalPartsCount"] == 2 and op["IsTruncated"] and [p["PartNumber"] for p in op["Parts"]] == [1], op
assert op["Parts"][0]["Size"] == len(p1) and op["Parts"][0]["ChecksumSHA1"] == sha("sha1", p1), op
op = s3.get_object_attributes(Bucket=b, Key="mp-sha1", ObjectAttributes=["ObjectParts"], PartNumberMarker=1)["ObjectParts"]
assert [p["PartNumber"] for p in op["Parts"]] == [2] and not op["IsTruncated"], op
try:
    s3.get_object_attributes(Bucket=b, Key="missing", ObjectAttributes=["ETag"]); raise SystemExit("attributes of nothing")
except botocore.exceptions.ClientError as e:
    assert e.response["Error"]["Code"] == "NoSuchKey", e.response
print("boto3 checksums OK", boto3.__version__)
