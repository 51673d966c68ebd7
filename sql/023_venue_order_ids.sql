-- 023: a LIVE order found by the venue's id (the gateway's GET and DELETE /api/v3/order?orderId=...)
-- through an index rather than a walk over the key's orders.
CREATE INDEX venue_orders_venue_id ON venue_orders(venue_order_id) WHERE venue_order_id IS NOT NULL;
