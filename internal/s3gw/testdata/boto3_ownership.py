# The boto3 ownership test (checksum_clients_test.go, TestBoto3NewerFeatures): python3 boto3_ownership.py
# ENDPOINT BUCKET with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY set.
# Prints "boto3 ownership OK".
import json, sys
import boto3, botocore
from botocore.config import Config
ep, b = sys.argv[1], sys.argv[2]
s3 = boto3.client("s3", endpoint_url=ep, config=Config(signature_version="s3v4"))
anon = boto3.client("s3", endpoint_url=ep, config=Config(signature_version=botocore.UNSIGNED))
def code(f, **kw):
    try:
        f(**kw)
    except botocore.exceptions.ClientError as e:
        return e.response["Error"]["Code"]
    return "OK"
# Ownership controls: ACLs disabled at creation, then changed and removed.
s3.create_bucket(Bucket=b, ObjectOwnership="BucketOwnerEnforced")
assert s3.get_bucket_ownership_controls(Bucket=b)["OwnershipControls"]["Rules"] == [{"ObjectOwnership": "BucketOwnerEnforced"}]
assert code(s3.put_object, Bucket=b, Key="k", Body=b"x", ACL="public-read") == "AccessControlListNotSupported"
assert code(s3.put_bucket_acl, Bucket=b, ACL="public-read") == "AccessControlListNotSupported"
s3.put_object(Bucket=b, Key="k", Body=b"x", ACL="bucket-owner-full-control")
s3.put_bucket_ownership_controls(Bucket=b, OwnershipControls={"Rules": [{"ObjectOwnership": "ObjectWriter"}]})
assert s3.get_bucket_ownership_controls(Bucket=b)["OwnershipControls"]["Rules"] == [{"ObjectOwnership": "ObjectWriter"}]
s3.delete_bucket_ownership_controls(Bucket=b)
assert code(s3.get_bucket_ownership_controls, Bucket=b) == "OwnershipControlsNotFoundError"
# The public access block.
assert code(s3.get_public_access_block, Bucket=b) == "NoSuchPublicAccessBlockConfiguration"
cfg = {"BlockPublicAcls": True, "IgnorePublicAcls": False, "BlockPublicPolicy": True, "RestrictPublicBuckets": False}
s3.put_public_access_block(Bucket=b, PublicAccessBlockConfiguration=cfg)
assert s3.get_public_access_block(Bucket=b)["PublicAccessBlockConfiguration"] == cfg
assert code(s3.put_bucket_acl, Bucket=b, ACL="public-read") == "AccessDenied"
assert code(s3.put_object, Bucket=b, Key="p", Body=b"p", ACL="public-read") == "AccessDenied"
pol = json.dumps({"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{b}/*"}]})
assert code(s3.put_bucket_policy, Bucket=b, Policy=pol) == "AccessDenied"
s3.delete_public_access_block(Bucket=b)
assert not s3.get_bucket_policy_status(Bucket=b)["PolicyStatus"]["IsPublic"]
s3.put_bucket_acl(Bucket=b, ACL="public-read")
assert code(anon.list_objects_v2, Bucket=b) == "OK"
assert s3.get_bucket_policy_status(Bucket=b)["PolicyStatus"]["IsPublic"]
s3.put_public_access_block(Bucket=b, PublicAccessBlockConfiguration={"IgnorePublicAcls": True})
assert code(anon.list_objects_v2, Bucket=b) == "AccessDenied"
assert not s3.get_bucket_policy_status(Bucket=b)["PolicyStatus"]["IsPublic"]
s3.put_bucket_policy(Bucket=b, Policy=pol)
assert s3.get_bucket_policy_status(Bucket=b)["PolicyStatus"]["IsPublic"]
assert anon.get_object(Bucket=b, Key="k")["Body"].read() == b"x"
print("boto3 ownership OK", boto3.__version__)
