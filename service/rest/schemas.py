"""Request bodies, checked with marshmallow before anything else runs."""

from marshmallow import RAISE, Schema, ValidationError, fields, validate


class WholeNumber(fields.Integer):
    """An integer that, as in JSON Schema, may be written ``3.0``; never a string or a boolean."""

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, bool) or not isinstance(value, (int, float)):
            raise ValidationError("Not a valid integer.")
        if isinstance(value, float) and not value.is_integer():
            raise ValidationError("Not a valid integer.")
        return super()._deserialize(int(value), attr, data, **kwargs)


class JsonBoolean(fields.Boolean):
    """JSON ``true`` or ``false`` only: marshmallow's Boolean also takes ``0``, ``1``, ``"yes"``..."""

    def _deserialize(self, value, attr, data, **kwargs):
        if not isinstance(value, bool):
            raise ValidationError("Not a valid boolean.")
        return value


class Seed(fields.Field):
    """A seed from 0 to 2**63 - 1 as a decimal string; a JSON number is accepted too until release 2.0
    (docs/changelog.md), though JavaScript clients cannot send one past 2**53 exactly."""

    def _deserialize(self, value, attr, data, **kwargs):
        if isinstance(value, str):
            if not (value.isascii() and value.isdigit() and len(value) <= 19):
                raise ValidationError("Not a decimal integer.")
            value = int(value)
        else:
            value = WholeNumber()._deserialize(value, attr, data, **kwargs)
        if not 0 <= value <= 2**63 - 1:
            raise ValidationError("Must be from 0 to 2**63 - 1.")
        return value


class CreateMatchBody(Schema):
    class Meta:
        unknown = RAISE

    game = fields.String(required=True, validate=validate.Length(min=1, max=64))
    variant = fields.String(validate=validate.Length(min=1, max=64))
    seats = WholeNumber(validate=validate.Range(min=1, max=16))
    seed = Seed()
    options = fields.Dict(keys=fields.String())
    turn_seconds = WholeNumber(validate=validate.Range(min=1, max=86400))
    bots = fields.List(fields.Nested(lambda: AddBotBody()), validate=validate.Length(max=16))
    hot_seat = JsonBoolean()  # one player may hold several seats (docs/api.md, "Players")


class JoinSeatBody(Schema):
    class Meta:
        unknown = RAISE

    name = fields.String(validate=validate.Length(min=1, max=64))  # not with a player token: the player's
    seat = WholeNumber(validate=validate.Range(min=0, max=15))
    entropy = fields.String()  # checked by the store (invalid_entropy): docs/fairness.md


class SubmitActionBody(Schema):
    class Meta:
        unknown = RAISE

    action = fields.Dict(keys=fields.String(), required=True)


class AddBotBody(Schema):
    class Meta:
        unknown = RAISE

    seat = WholeNumber(validate=validate.Range(min=0, max=15), allow_none=True)
    level = fields.String(required=True, validate=validate.Length(min=1, max=32))


class StartReplayBody(Schema):
    class Meta:
        unknown = RAISE

    seat = WholeNumber(validate=validate.Range(min=0, max=15), allow_none=True)
