# The boto3 lifecycle test (checksum_clients_test.go, TestBoto3NewerFeatures): python3 boto3_lifecycle.py
# ENDPOINT BUCKET with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set.
# Prints "boto3 lifecycle OK".
import datetime, sys
import boto3, botocore
from botocore.config import Config
ep, b = sys.argv[1], sys.argv[2]
s3 = boto3.client("s3", endpoint_url=ep, config=Config(signature_version="s3v4"))
def code(f, **kw):
    try:
        f(**kw)
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"]
    return "OK"
s3.create_bucket(Bucket=b)
assert code(s3.get_bucket_lifecycle_configuration, Bucket=b) == "NoSuchLifecycleConfiguration"
rules = [
    {"ID": "logs", "Filter": {"Prefix": "logs/"}, "Status": "Enabled", "Expiration": {"Days": 3}},
    {"ID": "tmp", "Filter": {"And": {"Prefix": "tmp/", "Tags": [{"Key": "k", "Value": "v"}], "ObjectSizeGreaterThan": 10}},
     "Status": "Disabled", "Expiration": {"Date": datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)}},
    {"ID": "versions", "Filter": {}, "Status": "Enabled",
     "NoncurrentVersionExpiration": {"NoncurrentDays": 5, "NewerNoncurrentVersions": 2},
     "AbortIncompleteMultipartUpload": {"DaysAfterInitiation": 7},
     "Transitions": [{"Days": 30, "StorageClass": "GLACIER"}]},
    {"ID": "markers", "Filter": {"Prefix": ""}, "Status": "Enabled", "Expiration": {"ExpiredObjectDeleteMarker": True}},
]
s3.put_bucket_lifecycle_configuration(Bucket=b, LifecycleConfiguration={"Rules": rules})
got = s3.get_bucket_lifecycle_configuration(Bucket=b)["Rules"]
assert [r["ID"] for r in got] == ["logs", "tmp", "versions", "markers"], got
assert got[0]["Filter"] == {"Prefix": "logs/"} and got[0]["Expiration"] == {"Days": 3}, got[0]
assert got[1]["Filter"]["And"] == {"Prefix": "tmp/", "Tags": [{"Key": "k", "Value": "v"}], "ObjectSizeGreaterThan": 10}, got[1]
assert got[1]["Status"] == "Disabled" and got[1]["Expiration"]["Date"] == datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc), got[1]
assert got[2]["NoncurrentVersionExpiration"] == {"NoncurrentDays": 5, "NewerNoncurrentVersions": 2}, got[2]
assert got[2]["AbortIncompleteMultipartUpload"] == {"DaysAfterInitiation": 7}, got[2]
assert got[2]["Transitions"] == [{"Days": 30, "StorageClass": "GLACIER"}], got[2]
assert got[3]["Expiration"] == {"ExpiredObjectDeleteMarker": True}, got[3]
# x-amz-expiration: boto3's Expiration on PUT, GET and HEAD.
put = s3.put_object(Bucket=b, Key="logs/x", Body=b"x")
assert 'rule-id="logs"' in put["Expiration"] and "expiry-date=" in put["Expiration"], put
assert s3.head_object(Bucket=b, Key="logs/x")["Expiration"] == put["Expiration"]
assert s3.get_object(Bucket=b, Key="logs/x")["Expiration"] == put["Expiration"]
s3.put_object(Bucket=b, Key="other", Body=b"o")
assert "Expiration" not in s3.head_object(Bucket=b, Key="other")
# Refusals.
bad = [{"ID": "x" * 256, "Filter": {}, "Status": "Enabled", "Expiration": {"Days": 1}}]
assert code(s3.put_bucket_lifecycle_configuration, Bucket=b, LifecycleConfiguration={"Rules": bad}) == "InvalidArgument"
dup = [{"ID": "a", "Filter": {}, "Status": "Enabled", "Expiration": {"Days": 1}}] * 2
assert code(s3.put_bucket_lifecycle_configuration, Bucket=b, LifecycleConfiguration={"Rules": dup}) == "InvalidArgument"
zero = [{"ID": "z", "Filter": {}, "Status": "Enabled", "Expiration": {"Days": 0}}]
assert code(s3.put_bucket_lifecycle_configuration, Bucket=b, LifecycleConfiguration={"Rules": zero}) == "InvalidArgument"
s3.delete_bucket_lifecycle(Bucket=b)
assert code(s3.get_bucket_lifecycle_configuration, Bucket=b) == "NoSuchLifecycleConfiguration"
for k in ("logs/x", "other"):
    s3.delete_object(Bucket=b, Key=k)
s3.delete_bucket(Bucket=b)
print("boto3 lifecycle OK")
