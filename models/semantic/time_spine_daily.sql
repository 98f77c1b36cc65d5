-- MetricFlow's time spine (this folder's YAML): one row per day. The input
-- contract carries no rating timestamp, so every measure of the semantic
-- layer aggregates over the constant date 1970-01-01 (the semantic models'
-- rated_on); the spine holds that one day, enough for MetricFlow to resolve
-- metric_time. Extend it when the facts carry real dates.
select cast('1970-01-01' as date) as date_day
