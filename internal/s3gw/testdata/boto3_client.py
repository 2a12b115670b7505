# The boto3 client test (clients_test.go): python3 boto3_client.py ENDPOINT BUCKET
# with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set. Prints "boto3 OK".
import boto3, io, os, sys, urllib.request, hashlib
ep = sys.argv[1]
from botocore.config import Config
s3 = boto3.client("s3", endpoint_url=ep, config=Config(signature_version="s3v4"))
b = sys.argv[2] if len(sys.argv) > 2 else "boto-bucket"
s3.create_bucket(Bucket=b)
s3.put_object(Bucket=b, Key="a/x.txt", Body=b"hello boto", ContentType="text/plain", Metadata={"k": "v"})
o = s3.get_object(Bucket=b, Key="a/x.txt")
assert o["Body"].read() == b"hello boto" and o["Metadata"] == {"k": "v"} and o["ContentType"] == "text/plain", o
assert s3.get_object(Bucket=b, Key="a/x.txt", Range="bytes=6-")["Body"].read() == b"boto"
h = s3.head_object(Bucket=b, Key="a/x.txt"); assert h["ContentLength"] == 10
for i in range(5):
    s3.put_object(Bucket=b, Key=f"p/{i}", Body=b"%d" % i)
pages = list(s3.get_paginator("list_objects_v2").paginate(Bucket=b, Prefix="p/", PaginationConfig={"PageSize": 2}))
keys = [c["Key"] for p in pages for c in p.get("Contents", [])]
assert keys == [f"p/{i}" for i in range(5)] and len(pages) == 3, (keys, len(pages))
r = s3.list_objects_v2(Bucket=b, Delimiter="/")
assert [p["Prefix"] for p in r["CommonPrefixes"]] == ["a/", "p/"], r
s3.copy_object(Bucket=b, Key="copy", CopySource={"Bucket": b, "Key": "a/x.txt"})
url = s3.generate_presigned_url("get_object", Params={"Bucket": b, "Key": "copy"}, ExpiresIn=60)
assert urllib.request.urlopen(url).read() == b"hello boto"
# boto3's default presigner signs with Signature Version 2.
url = boto3.client("s3", endpoint_url=ep).generate_presigned_url("get_object", Params={"Bucket": b, "Key": "copy"}, ExpiresIn=60)
assert "AWSAccessKeyId=" in url and urllib.request.urlopen(url).read() == b"hello boto", url
data = os.urandom(13 << 20)
s3.upload_fileobj(io.BytesIO(data), b, "big", Config=boto3.s3.transfer.TransferConfig(multipart_threshold=5 << 20, multipart_chunksize=5 << 20))
got = s3.get_object(Bucket=b, Key="big")
assert got["Body"].read() == data and got["ETag"].endswith('-3"'), got["ETag"]
# ACLs: canned on the bucket and the object, an AccessControlPolicy
# round trip, anonymous access through an unsigned client and plain HTTP.
import botocore, urllib.error
s3.put_bucket_acl(Bucket=b, ACL="public-read")
ba = s3.get_bucket_acl(Bucket=b)
assert {(g["Grantee"].get("URI"), g["Permission"]) for g in ba["Grants"]} >= {("http://acs.amazonaws.com/groups/global/AllUsers", "READ")}, ba
anon = boto3.client("s3", endpoint_url=ep, config=Config(signature_version=botocore.UNSIGNED))
assert "copy" in [c["Key"] for c in anon.list_objects_v2(Bucket=b)["Contents"]]
def anon_get(key):
    try:
        return urllib.request.urlopen(f"{ep}/{b}/{key}").read()
    except urllib.error.HTTPError as e:
        return e.code
assert anon_get("copy") == 403
s3.put_object_acl(Bucket=b, Key="copy", ACL="public-read")
oa = s3.get_object_acl(Bucket=b, Key="copy")
assert oa["Owner"]["ID"] and len(oa["Grants"]) == 2, oa
assert anon_get("copy") == b"hello boto"
mine = [g for g in oa["Grants"] if g["Grantee"]["Type"] == "CanonicalUser"]
s3.put_object_acl(Bucket=b, Key="copy", AccessControlPolicy={"Owner": oa["Owner"], "Grants": mine})
assert s3.get_object_acl(Bucket=b, Key="copy")["Grants"] == mine
assert anon_get("copy") == 403
s3.put_bucket_acl(Bucket=b, ACL="private")
# A bucket policy lets anonymous GETs in where the ACLs do not.
import json
pol = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{b}/copy"}]})
s3.put_bucket_policy(Bucket=b, Policy=pol)
assert json.loads(s3.get_bucket_policy(Bucket=b)["Policy"]) == json.loads(pol)
assert anon_get("copy") == b"hello boto" and anon_get("big") == 403
s3.delete_bucket_policy(Bucket=b)
assert anon_get("copy") == 403
try:
    anon.list_objects_v2(Bucket=b); raise SystemExit("anonymous listed a private bucket")
except botocore.exceptions.ClientError as e:
    assert e.response["Error"]["Code"] == "AccessDenied", e.response
# Tagging: on put, as a subresource, counted on GET; a bucket's tags.
s3.put_object(Bucket=b, Key="tagged", Body=b"t", Tagging="team=s3&note=a%20b")
assert s3.get_object(Bucket=b, Key="tagged")["TagCount"] == 2
assert s3.get_object_tagging(Bucket=b, Key="tagged")["TagSet"] == [{"Key": "team", "Value": "s3"}, {"Key": "note", "Value": "a b"}]
s3.put_object_tagging(Bucket=b, Key="tagged", Tagging={"TagSet": [{"Key": "k", "Value": "v"}]})
assert s3.get_object_tagging(Bucket=b, Key="tagged")["TagSet"] == [{"Key": "k", "Value": "v"}]
try:
    s3.put_object_tagging(Bucket=b, Key="tagged", Tagging={"TagSet": [{"Key": "k%d" % i, "Value": "v"} for i in range(11)]})
    raise SystemExit("11 tags accepted")
except botocore.exceptions.ClientError as e:
    assert e.response["Error"]["Code"] == "InvalidTag", e.response
s3.delete_object_tagging(Bucket=b, Key="tagged")
assert s3.get_object_tagging(Bucket=b, Key="tagged")["TagSet"] == []
s3.put_bucket_tagging(Bucket=b, Tagging={"TagSet": [{"Key": "env", "Value": "test"}]})
assert s3.get_bucket_tagging(Bucket=b)["TagSet"] == [{"Key": "env", "Value": "test"}]
s3.delete_bucket_tagging(Bucket=b)
try:
    s3.get_bucket_tagging(Bucket=b); raise SystemExit("tags after delete")
except botocore.exceptions.ClientError as e:
    assert e.response["Error"]["Code"] == "NoSuchTagSet", e.response
# CORS: the configuration, then a browser's preflight and GET by plain HTTP.
s3.put_bucket_cors(Bucket=b, CORSConfiguration={"CORSRules": [{"AllowedOrigins": ["https://*.example.com"], "AllowedMethods": ["GET", "PUT"],
    "AllowedHeaders": ["*"], "ExposeHeaders": ["ETag"], "MaxAgeSeconds": 600}]})
rules = s3.get_bucket_cors(Bucket=b)["CORSRules"]
assert rules[0]["AllowedOrigins"] == ["https://*.example.com"] and rules[0]["MaxAgeSeconds"] == 600, rules
def http(method, key, headers):
    try:
        r = urllib.request.urlopen(urllib.request.Request(f"{ep}/{b}/{key}", method=method, headers=headers))
        return r.status, r.headers
    except urllib.error.HTTPError as e:
        return e.code, e.headers
st, h = http("OPTIONS", "tagged", {"Origin": "https://app.example.com", "Access-Control-Request-Method": "PUT", "Access-Control-Request-Headers": "content-type"})
assert st == 200 and h["Access-Control-Allow-Origin"] == "https://app.example.com" and h["Access-Control-Max-Age"] == "600", (st, dict(h))
st, h = http("OPTIONS", "tagged", {"Origin": "https://evil.org", "Access-Control-Request-Method": "GET"})
assert st == 403, st
s3.put_object_acl(Bucket=b, Key="tagged", ACL="public-read")
st, h = http("GET", "tagged", {"Origin": "https://app.example.com"})
assert st == 200 and h["Access-Control-Allow-Origin"] == "https://app.example.com" and h["Access-Control-Expose-Headers"] == "ETag", (st, dict(h))
s3.delete_bucket_cors(Bucket=b)
s3.delete_object(Bucket=b, Key="tagged")
d = s3.delete_objects(Bucket=b, Delete={"Objects": [{"Key": k} for k in keys + ["a/x.txt", "copy", "big"]]})
assert len(d["Deleted"]) == 8, d
try:
    s3.get_object(Bucket=b, Key="copy"); raise SystemExit("deleted object still there")
except s3.exceptions.NoSuchKey:
    pass
s3.delete_bucket(Bucket=b)
print("boto3 OK", boto3.__version__)
