"""Request bodies, checked with marshmallow before anything else runs."""

from marshmallow import RAISE, Schema, fields, validate


class CreateMatchBody(Schema):
    class Meta:
        unknown = RAISE

    game = fields.String(required=True, validate=validate.Length(min=1, max=64))
    variant = fields.String(validate=validate.Length(min=1, max=64))
    seats = fields.Integer(strict=True, validate=validate.Range(min=1, max=16))
    seed = fields.Integer(strict=True, validate=validate.Range(min=0, max=2**63 - 1))
    options = fields.Dict(keys=fields.String())


class JoinSeatBody(Schema):
    class Meta:
        unknown = RAISE

    name = fields.String(required=True, validate=validate.Length(min=1, max=64))
    seat = fields.Integer(strict=True, validate=validate.Range(min=0, max=15))


class SubmitActionBody(Schema):
    class Meta:
        unknown = RAISE

    action = fields.Dict(keys=fields.String(), required=True)
