import Testing
import Weather

@Suite struct KMAGridTests {
    @Test("Seoul City Hall → (60, 127)") func seoul() {
        #expect(KMAGrid.point(lat: 37.5663, lon: 126.9779) == KMAGrid.Point(nx: 60, ny: 127))
    }

    @Test("Busan → (98, 76)") func busan() {
        #expect(KMAGrid.point(lat: 35.1796, lon: 129.0756) == KMAGrid.Point(nx: 98, ny: 76))
    }

    @Test("Jeju → (53, 38)") func jeju() {
        #expect(KMAGrid.point(lat: 33.4996, lon: 126.5312) == KMAGrid.Point(nx: 53, ny: 38))
    }

    @Test("the grid origin (OLAT, OLON) maps to (XO, YO)") func origin() {
        #expect(KMAGrid.point(lat: 38, lon: 126) == KMAGrid.Point(nx: 43, ny: 136))
    }
}
