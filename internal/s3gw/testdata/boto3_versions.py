# The boto3 versioning test (version_clients_test.go): python3
# boto3_versions.py ENDPOINT BUCKET with AWS_ACCESS_KEY_ID and
# AWS_SECRET_ACCESS_KEY set. Prints "boto3 versions OK".
import boto3, botocore, sys
from botocore.config import Config
ep, b = sys.argv[1], sys.argv[2]
s3 = boto3.client("s3", endpoint_url=ep, config=Config(signature_version="s3v4"))
s3.create_bucket(Bucket=b)
assert "Status" not in s3.get_bucket_versioning(Bucket=b)
s3.put_object(Bucket=b, Key="doc", Body=b"v0")  # before versioning: the null version
s3.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Enabled"})
assert s3.get_bucket_versioning(Bucket=b)["Status"] == "Enabled"
ids = [s3.put_object(Bucket=b, Key="doc", Body=b"v%d" % i)["VersionId"] for i in (1, 2)]
assert len(set(ids)) == 2 and "null" not in ids, ids
o = s3.get_object(Bucket=b, Key="doc")
assert o["Body"].read() == b"v2" and o["VersionId"] == ids[1], o
assert s3.get_object(Bucket=b, Key="doc", VersionId=ids[0])["Body"].read() == b"v1"
assert s3.get_object(Bucket=b, Key="doc", VersionId="null")["Body"].read() == b"v0"
assert s3.head_object(Bucket=b, Key="doc", VersionId=ids[0])["VersionId"] == ids[0]

# A delete marker hides the object; listings show only live latest versions.
d = s3.delete_object(Bucket=b, Key="doc")
assert d["DeleteMarker"] and d["VersionId"] not in ids, d
marker = d["VersionId"]
try:
    s3.get_object(Bucket=b, Key="doc")
    raise AssertionError("GET of a deleted key succeeded")
except botocore.exceptions.ClientError as e:
    assert e.response["Error"]["Code"] == "NoSuchKey", e.response
    assert e.response["ResponseMetadata"]["HTTPHeaders"].get("x-amz-delete-marker") == "true", e.response
assert s3.list_objects_v2(Bucket=b).get("KeyCount") == 0
v = s3.list_object_versions(Bucket=b)
assert [(m["Key"], m["VersionId"], m["IsLatest"]) for m in v["DeleteMarkers"]] == [("doc", marker, True)], v
assert [(x["VersionId"], x["IsLatest"]) for x in v["Versions"]] == [(ids[1], False), (ids[0], False), ("null", False)], v["Versions"]

# Restore by deleting the marker.
r = s3.delete_object(Bucket=b, Key="doc", VersionId=marker)
assert r["DeleteMarker"] and r["VersionId"] == marker, r
assert s3.get_object(Bucket=b, Key="doc")["Body"].read() == b"v2"

# Restore an older version by copying it over the latest.
c = s3.copy_object(Bucket=b, Key="doc", CopySource={"Bucket": b, "Key": "doc", "VersionId": ids[0]})
assert c["CopySourceVersionId"] == ids[0] and c["VersionId"] not in ids, c
assert s3.get_object(Bucket=b, Key="doc")["Body"].read() == b"v1"

# Paginated version listing (max-keys 2) gives every version once, in order.
for i in range(3):
    s3.put_object(Bucket=b, Key="many", Body=b"%d" % i)
pages = list(s3.get_paginator("list_object_versions").paginate(Bucket=b, PaginationConfig={"PageSize": 2}))
got = [(x["Key"], x["VersionId"]) for p in pages for x in p.get("Versions", [])]
full = [(x["Key"], x["VersionId"]) for x in s3.list_object_versions(Bucket=b)["Versions"]]
assert got == full and len(full) == 4 + 3 and len(pages) >= 4, (got, full, len(pages))

# Remove one version for good; a malformed id is refused.
s3.delete_object(Bucket=b, Key="doc", VersionId=ids[0])
try:
    s3.get_object(Bucket=b, Key="doc", VersionId=ids[0])
    raise AssertionError("GET of a removed version succeeded")
except botocore.exceptions.ClientError as e:
    assert e.response["Error"]["Code"] == "NoSuchVersion", e.response
try:
    s3.get_object(Bucket=b, Key="doc", VersionId="not-an-id")
    raise AssertionError("GET of a malformed version id succeeded")
except botocore.exceptions.ClientError as e:
    assert e.response["Error"]["Code"] == "InvalidArgument", e.response

# Suspended: PUT replaces the null version.
s3.put_bucket_versioning(Bucket=b, VersioningConfiguration={"Status": "Suspended"})
assert "VersionId" not in s3.put_object(Bucket=b, Key="doc", Body=b"n1")  # as S3 (s3-tests) answers
assert s3.get_object(Bucket=b, Key="doc", VersionId="null")["Body"].read() == b"n1"
nulls = [x for x in s3.list_object_versions(Bucket=b, Prefix="doc")["Versions"] if x["VersionId"] == "null"]
assert len(nulls) == 1 and nulls[0]["IsLatest"], nulls

# Empty the bucket version by version, then remove it.
v = s3.list_object_versions(Bucket=b)
objs = [{"Key": x["Key"], "VersionId": x["VersionId"]} for x in v.get("Versions", []) + v.get("DeleteMarkers", [])]
r = s3.delete_objects(Bucket=b, Delete={"Objects": objs})
assert len(r["Deleted"]) == len(objs) and not r.get("Errors"), r
s3.delete_bucket(Bucket=b)

# Left for the aws cli to list: a version under a delete marker.
s3.create_bucket(Bucket=b + "-kept")
s3.put_bucket_versioning(Bucket=b + "-kept", VersioningConfiguration={"Status": "Enabled"})
s3.put_object(Bucket=b + "-kept", Key="k", Body=b"kept")
s3.delete_object(Bucket=b + "-kept", Key="k")
print("boto3 versions OK")
